#!/usr/bin/env python3
"""Retrieval on a labelled question set (fixtures/labelled/*.jsonl): for each
answerable question of a split, run `kebab search --json` and report how often
a gold file is the top hit, among the top 8 (what an ask packs), and nDCG@10
with each gold file relevant once (a file's later chunks are not counted again).

usage: scripts/labelled-retrieval.py KEBAB DATA_DIR SET --mode lexical|vector|hybrid
       [--split dev|test|all] [--config FILE]
The split is the one `kebab eval gate` uses: FNV-1a 64 of the id, even = dev.
"""
import argparse
import importlib.util
import json
import math
import pathlib
import subprocess
import sys

# The split is labelled-check.py's (the same as `kebab eval gate`).
_spec = importlib.util.spec_from_file_location("labelled_check", pathlib.Path(__file__).with_name("labelled-check.py"))
_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_check)
split_of = _check.split_of


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("data_dir")
    ap.add_argument("set")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--config")
    a = ap.parse_args()
    items = [json.loads(l) for l in open(a.set, encoding="utf-8") if l.strip()]
    items = [i for i in items if i["kind"] == "answerable" and (a.split == "all" or split_of(i["id"]) == a.split)]
    top1 = top8 = 0
    ndcg = 0.0
    modes = {}
    for item in items:
        cmd = [a.kebab, "--data-dir", a.data_dir, "--json", "-q", "search", "--mode", a.mode, "-k", "10", item["question"]]
        if a.config:
            cmd[1:1] = ["--config", a.config]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{item['id']}: kebab failed: {out.stderr.strip()}")
        doc = json.loads(out.stdout)
        modes[doc["mode"]] = modes.get(doc["mode"], 0) + 1
        paths = [h["citation"]["path"] for h in doc["hits"]]
        gold = set(item["sources"])
        is_gold = [any(p.endswith("/" + g) or p == g for g in gold) for p in paths]
        top1 += bool(is_gold[:1] and is_gold[0])
        top8 += any(is_gold[:8])
        seen, dcg = set(), 0.0
        for rank, (p, g) in enumerate(zip(paths, is_gold)):
            if g and p not in seen:
                seen.add(p)
                dcg += 1 / math.log2(rank + 2)
        ideal = sum(1 / math.log2(r + 2) for r in range(min(len(gold), 10)))
        ndcg += dcg / ideal
    n = len(items)
    print(f"{a.set} split={a.split} mode={a.mode} questions={n} (ran as {modes})")
    print(f"top-1 {100 * top1 / n:.1f}%  top-8 {100 * top8 / n:.1f}%  nDCG@10 {ndcg / n:.4f}")


if __name__ == "__main__":
    main()
