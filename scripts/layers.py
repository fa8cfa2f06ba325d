#!/usr/bin/env python3
"""Checks that kebab's top-level modules import only downward.

Reads every `crate::X` / `use crate::{X, ...}` mention in the shipped code of
src/<module>/ (up to a file's `#[cfg(test)]` module; a test module in its own
file is left out too), builds the module graph and prints the cycles and the
imports that go against the layer order written at the top of src/lib.rs.
Exit 1 when there is a cycle or an upward import.
"""
import re, sys, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "src"
lib = (ROOT / "lib.rs").read_text()
mods = re.findall(r"^pub mod (\w+);", lib, re.M)

def module_of(path):
    rel = path.relative_to(ROOT)
    name = rel.parts[0].removesuffix(".rs")
    return name if name in mods else None

def test_files():
    """Files of unit-test modules declared out of line (`#[cfg(test)] mod tests;`)."""
    out = set()
    for path in ROOT.rglob("*.rs"):
        base = path.parent if path.name in ("mod.rs", "lib.rs") else path.with_suffix("")
        for name in re.findall(r"#\[cfg\(test\)\]\s*mod (\w+);", path.read_text()):
            out |= {base / f"{name}.rs", base / name / "mod.rs"}
    return out

graph = {m: set() for m in mods}
where = {}
tests_only = test_files()
for path in ROOT.rglob("*.rs"):
    m = module_of(path)
    if m is None or path in tests_only:
        continue
    text = path.read_text()
    # Shipped code only: unit-test modules (at the end of a file by
    # convention) may check a stage against a later layer's checker.
    # A test-only item higher up (`#[cfg(test)] pub(crate) use …`) is not
    # where the shipped code ends.
    tests_at = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    text = text[: tests_at.start()] if tests_at else text
    # strip comments
    text = re.sub(r"//[^\n]*", "", text)
    for dep in re.findall(r"crate::(\w+)", text):
        if dep in mods and dep != m:
            graph[m].add(dep)
            where.setdefault((m, dep), str(path.relative_to(ROOT.parent)))
    for group in re.findall(r"use crate::\{([^}]*)\}", text):
        for dep in re.findall(r"\b(\w+)\b", group):
            if dep in mods and dep != m:
                graph[m].add(dep)
                where.setdefault((m, dep), str(path.relative_to(ROOT.parent)))

# Layer order from lib.rs: a line "//! Layers: a / b → c, d → …"
layer_line = re.search(r"^//! Layers?:(.*(?:\n//!   .*)*)", lib, re.M)
rank = {}
if layer_line:
    text = layer_line.group(1).replace("//!", " ")
    for i, level in enumerate(text.split("→")):
        for name in re.findall(r"\w+", level):
            rank[name] = i

bad = 0
for m in mods:
    for d in sorted(graph[m]):
        if m in rank and d in rank and rank[d] > rank[m]:
            print(f"upward: {m} -> {d} ({where[(m, d)]})")
            bad += 1

# cycles (Tarjan)
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(comp)
for v in mods:
    if v not in index: strong(v)
for comp in sccs:
    print("cycle among:", ", ".join(sorted(comp)))
    for a in sorted(comp):
        for b in sorted(graph[a]):
            if b in comp:
                print(f"   {a} -> {b} ({where[(a, b)]})")
    bad += 1
missing = [m for m in mods if m not in rank]
if rank and missing:
    print("not in the layer order:", ", ".join(missing)); bad += 1
print("ok: no cycle, no upward import" if not bad else f"{bad} problem(s)")
sys.exit(1 if bad else 0)
