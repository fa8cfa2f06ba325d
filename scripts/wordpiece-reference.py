#!/usr/bin/env python3
"""Writes fixtures/embed/wordpiece-reference.json: the token ids Hugging Face
`tokenizers` gives for texts of our own (every script, accents, punctuation,
control and format characters, long words, a text past the model's length),
with the model's tokenizer.json, cut at 256 and unpadded as kebab embeds.
`embed::wordpiece` is tested against it.

Needs the Python `tokenizers` package (pip) and the installed model:
  scripts/wordpiece-reference.py target/kebab-test-model/tokenizer.json > fixtures/embed/wordpiece-reference.json
"""
import json
import sys

from tokenizers import Tokenizer

TEXTS = [
    "How do bees cool the hive on a hot afternoon?",
    "The smoker calms the colony; open the hive from the back.",
    "Café owners in Zürich serve crème brûlée — naïvely, perhaps.",
    "ÅNGSTRÖM, Ørsted and Þór: ACCENTS & CAPITALS!",
    "İstanbul'da ılık bir gün; straße, STRASSE, ΣΊΣΥΦΟΣ and σοφός.",
    "소유권이란 무엇인가요? 러스트의 각 값은 소유자가 정해져 있습니다.",
    "벌집을 열 때는 뒤쪽에서 여세요. 연기를 먼저 피우면 벌들이 얌전해집니다.",
    "漢字と仮名が混ざった文章です。東京で蜂蜜を買いました。",
    "中文句子：蜜蜂在夏天很忙，我们需要检查蜂箱。",
    "Emoji 🦀🐝 and newer ones 🥲🫠 sit between words.",
    "Quotes “like these”, ‘these’, «these» and „these“ … plus ellipsis…",
    "Dashes – and — and ‐ and a minus − sign; bullets • and ·.",
    "fn main() { let v: Vec<i32> = vec![1, 2, 3]; println!(\"{:?}\", v); }",
    "See https://example.org/path?q=hive&frames=10#top or mail keeper@example.org.",
    "Tabs\tand\nnewlines\r\nand\u00a0non-breaking\u2003em\u2028line separator.",
    "Zero\u200bwidth\u200djoiner\ufeffbyte order mark\u0000nul\ufffdreplacement\u0007bell.",
    "Combining: e\u0301 a\u0308 o\u0302 and precomposed é ä ô; fullwidth ＡＢＣ１２３.",
    "Supercalifragilisticexpialidociousandthenmuchmorelettersuntilthewordisfarlongerthanonehundredcharactersinallofit ok",
    "Numbers 3.14159, 1,000,000 and 2024-11-25T10:00:00Z; version v0.23.3.",
    "x" * 30 + " unknownwordpieces qzxjvk wrrrrrrrr",
    "",
    "   ",
    "The hive record grows with every inspection. " * 40,
]


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    tok.no_padding()
    tok.enable_truncation(256)
    items = [{"text": t, "ids": tok.encode(t).ids} for t in TEXTS]
    json.dump({"tokenizer": "all-MiniLM-L6-v2 tokenizer.json, tokenizers 0.23, truncation 256", "items": items}, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
