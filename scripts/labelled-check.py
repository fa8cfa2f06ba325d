#!/usr/bin/env python3
"""Checks the labelled question sets in fixtures/labelled/ (see docs/gate.md).

- every id is unique and every item has a known kind;
- answerable items name gold file(s) and facts (lists of lowercase phrasings);
- no run of five words of a question is copied from its gold file(s)
  (case and punctuation folded), so questions are paraphrases, not quotes;
- with --book DIR (the book's src/ for that language): every gold file exists
  and every fact has at least one phrasing found in a gold file;
- prints the dev/test split counts. The split is FNV-1a 64 of the id, even -> dev,
  computed the same way in src/eval/split.rs.

usage: scripts/labelled-check.py FILE.jsonl [--book DIR]
"""
import json
import re
import sys
from collections import Counter

KINDS = {"answerable", "near_miss", "off_topic", "partial", "no_content"}


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def split_of(item_id):
    return "dev" if fnv1a64(item_id) % 2 == 0 else "test"


def words(text):
    return re.findall(r"\w+", text.lower())


def grams(ws, n=5):
    return {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 1
    path, book = args[0], None
    if "--book" in args:
        book = args[args.index("--book") + 1]
    errors, seen, counts = [], set(), Counter()
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        where = f"{path}:{n} ({d.get('id')})"
        if d["id"] in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(d["id"])
        if d["kind"] not in KINDS:
            errors.append(f"{where}: unknown kind {d['kind']}")
        counts[(split_of(d["id"]), d["kind"])] += 1
        if d["kind"] != "answerable":
            continue
        facts = d.get("facts") or []
        if not d.get("sources") or not facts:
            errors.append(f"{where}: answerable item needs sources and facts")
        for f in facts:
            if not f or any(p != p.lower() for p in f):
                errors.append(f"{where}: a fact is a non-empty list of lowercase phrasings: {f}")
        if book is None:
            continue
        texts = []
        for s in d["sources"]:
            try:
                texts.append(open(f"{book}/{s}", encoding="utf-8").read())
            except OSError:
                errors.append(f"{where}: gold file {s} not in {book}")
        gold = "\n".join(texts)
        copied = grams(words(d["question"])) & grams(words(gold))
        if copied:
            errors.append(f"{where}: copies a five-word run from its gold file: {' '.join(sorted(copied)[0])}")
        low = " ".join(gold.lower().split())
        for f in facts:
            if not any(p in low for p in f):
                errors.append(f"{where}: no phrasing of fact {f} is in the gold file(s)")
    for e in errors:
        print(e)
    for split in ("dev", "test"):
        row = ", ".join(f"{k} {counts[(split, k)]}" for k in sorted(KINDS))
        print(f"{split}: {row}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
