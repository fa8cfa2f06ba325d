#!/usr/bin/env python3
"""Per-vector or per-dimension scales for kebab's int8 vector codes, measured.

Reads the f32 vectors of a kebab database (the `embeddings` table; any
embedded collection, e.g. `kebab ingest` of the Rust Book with the built-in
model) and uses each of its first 200 chunks as a query (itself excluded). For
each, it compares the exact f32 top 10 with the top 10 of the codes alone (no
re-score) under three encodings: one scale per vector with the query coded too
(what kebab does: an integer dot product), one scale per vector with an f32
query, and one scale per dimension (over the whole collection) with an f32
query. Prints recall@10 of each. Pure Python: about a minute per 1,000 vectors.

Usage: scripts/int8-scales.py DATABASE
"""
import operator
import sqlite3
import struct
import sys

DIM = 384
QUERIES = 200
K = 10


def dot(a, b):
    return sum(map(operator.mul, a, b))


def per_vector(v):
    scale = max(abs(x) for x in v) / 127 or 1.0
    return scale, [max(-127, min(127, round(x / scale))) for x in v]


def best(scores, skip):
    order = sorted((i for i in range(len(scores)) if i != skip), key=lambda i: -scores[i])
    return set(order[:K])


def main(db):
    rows = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
        f"SELECT vector FROM embeddings WHERE dim = {DIM} ORDER BY chunk_id").fetchall()
    vecs = [struct.unpack(f"<{DIM}f", r[0]) for r in rows]
    coded = [per_vector(v) for v in vecs]
    dim_scale = [max(abs(v[d]) for v in vecs) / 127 or 1.0 for d in range(DIM)]
    dim_coded = [[max(-127, min(127, round(x / s))) for x, s in zip(v, dim_scale)] for v in vecs]
    n = min(QUERIES, len(vecs))
    found = [0.0, 0.0, 0.0]
    for qi in range(n):
        q = vecs[qi]
        exact = best([dot(q, v) for v in vecs], qi)
        _, qc = per_vector(q)
        q_dim = [x * s for x, s in zip(q, dim_scale)]
        tops = [
            best([s * dot(qc, c) for s, c in coded], qi),
            best([s * dot(q, c) for s, c in coded], qi),
            best([dot(q_dim, c) for c in dim_coded], qi),
        ]
        for i, t in enumerate(tops):
            found[i] += len(exact & t) / K
    print(f"{len(vecs)} vectors, {n} queries; recall@{K} of the int8 codes alone (no re-score):")
    for name, f in zip(["per-vector scale, query coded (kebab)", "per-vector scale, f32 query",
                        "per-dimension scale, f32 query"], found):
        print(f"  {name}: {f / n:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/int8-scales.py DATABASE")
    main(sys.argv[1])
