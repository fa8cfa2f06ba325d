#!/usr/bin/env python3
"""Where a bulk ingest spends its time, by stage, from a `perf` call-graph profile.

Usage (dev profile: symbols kept, dependencies at opt-level 3 as in release):
  cargo bench --profile dev --bench lexical --no-run
  perf record -F 499 --call-graph dwarf,32768 -o /tmp/perf.data target/debug/deps/lexical-HASH --size 10k
  perf script -i /tmp/perf.data -F time,ip,sym > /tmp/stacks.txt
  scripts/ingest-profile.py /tmp/stacks.txt [N]

Only samples under `kebab::ingest::run` count; they are grouped into runs (one per corpus
the bench ingests, split where no sample came for 0.5 s) and run N (default: the last,
the synthetic corpus) is shown. Each sample goes to the first stage, in the order below,
with a matching frame anywhere on its stack.
"""
import collections
import sys

STAGES = [
    ("walk", ["walkdir", "ingest::walk"]),
    ("read file", ["std::fs::read"]),
    ("FTS5 flush+merge at a statement savepoint", ["fts5SavepointMethod", "fts5ReleaseMethod"]),
    ("commit (FTS5 flush+merge, WAL write)", ["fts5SyncMethod", "vdbeCommit", "sqlite3VdbeHalt", "commit_batch"]),
    ("trigram index: tokenize + pending terms", ["fts5TriTokenize"]),
    ("word index: tokenize + pending terms", ["fts5PorterTokenize", "fts5UnicodeTokenize"]),
    ("FTS5 flush+merge when pending terms fill", ["sqlite3Fts5FlushToDisk", "fts5IndexFlush", "fts5IndexMerge"]),
    ("other FTS5 insert work", ["fts5"]),
    ("hash (blake3)", ["blake3"]),
    ("chunk (Markdown)", ["ingest::markdown"]),
    ("source hash lookup", ["source_hash", "indexed_sources"]),
    ("script: language, Hangul test, token estimate", ["script::"]),
    ("chunk rows (b-tree, JSON)", ["insert_chunks", "serde_json"]),
    ("document and source rows", ["apply_source"]),
]


def samples(path):
    cur = None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            if cur:
                yield cur
            cur = None
        elif not line[0].isspace():
            cur = (float(line.strip().rstrip(":")), [])
        elif cur is not None:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                cur[1].append(parts[1])
    if cur:
        yield cur


def main():
    path = sys.argv[1]
    which = int(sys.argv[2]) if len(sys.argv) > 2 else -1
    runs = []
    for t, stack in samples(path):
        if not any("kebab::ingest::run" in f for f in stack):
            continue
        if runs and t - runs[-1][-1][0] < 0.5:
            runs[-1].append((t, stack))
        else:
            runs.append([(t, stack)])
    print("samples per run:", [len(r) for r in runs])
    counts = collections.Counter()
    for _, stack in runs[which]:
        stage = next((name for name, keys in STAGES if any(k in f for f in stack for k in keys)), "other")
        counts[stage] += 1
    total = len(runs[which])
    for name, n in counts.most_common():
        print(f"{name:<48} {n:6d} {100 * n / total:5.1f}%")


if __name__ == "__main__":
    main()
