#!/usr/bin/env python3
"""A labelled set with one typo a question: the question's longest word typed
in lower case (7 letters or more) loses its middle letter ("difference" ->
"diffeence"), as a hurried user types it; with --short, its first such word
of exactly 6 letters does ("shadow" -> "shaow"), leaving a 5-letter typo;
with --double, the longest word's middle letter is typed twice
("difference" -> "differrence").
Ids, kinds and facts are kept, so the dev/test split is the set's own.
Measures `search::spelling` (docs/gate.md, "Typos"):

    scripts/typo-set.py fixtures/labelled/rust-book-en.jsonl [--short|--double] > /tmp/typo-en.jsonl
    kebab eval gate --mode lexical --split test --set /tmp/typo-en.jsonl
"""
import json
import re
import sys

SHORT = "--short" in sys.argv[2:]
DOUBLE = "--double" in sys.argv[2:]

for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip():
        continue
    item = json.loads(line)
    q = item["question"]
    words = [m for m in re.finditer(r"[A-Za-z]+", q) if m.group().islower()]
    if SHORT:
        words = [m for m in words if len(m.group()) == 6][:1]
    else:
        words = [m for m in words if len(m.group()) >= 7]
    if words:
        m = max(words, key=lambda m: len(m.group()))
        w = m.group()
        k = len(w) // 2
        typo = w[: k + 1] + w[k:] if DOUBLE else w[:k] + w[k + 1 :]
        item["question"] = q[: m.start()] + typo + q[m.end() :]
    print(json.dumps(item, ensure_ascii=False))
