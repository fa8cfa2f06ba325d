#!/usr/bin/env python3
"""Real-model harness (opt-in, never CI): asks labelled Rust Book questions of
a real small local model through `kebab ask --json` and prints, per
configuration, grounded / correct / attributed / refused rates, time to first
token (as the model server logs it) and total time.

It starts ../shared/real-llm/server.mjs (node-llama-cpp, CPU) on loopback,
ingests the English Rust Book into its own data dir (lexical, no embedder; or
`--mode hybrid`: the built-in embedding model, installed into its own data
dir, as the README sets kebab up), and runs one split of fixtures/labelled/rust-book-en.jsonl
(src/eval/split.rs: FNV-1a of the id, odd = test; `--split dev` to tune, test
to report). The unanswerable questions are taken in turn from each kind
(near-miss, off-topic, partly matching). Correct = grounded and every
fact of the item stated, as `kebab eval gate` checks facts.

  scripts/real-llm.py --kebab target/debug/kebab --rl /tmp/rl \\
      --model /tmp/rl/models/qwen-coder-0.5b.gguf --name qwen-coder:0.5b \\
      --config compact:passages:ollama --config compact:chunks:ollama \\
      --answerable 30 --unanswerable 15

Each --config is TEMPLATE:EVIDENCE:PROVIDER[:K] (provider ollama or openai; K
entries packed, default 8).
--attribution off repeats today's strict behaviour for comparison.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def in_split(item_id, split):
    return (fnv1a64(item_id) % 2 == 1) == (split == "test")


def in_turn(groups):
    """One item from each group in turn, until all are used."""
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def states_facts(answer, facts):
    text = " ".join(answer.split()).lower()
    return all(any(p in text for p in f) for f in facts)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args, log_path):
    port = free_port()
    env = dict(os.environ, MODEL=args.model, MODEL_NAME=args.name, PORT=str(port), THREADS=str(args.threads),
               USAGE="1", CTX=str(args.ctx))
    log = open(log_path, "w")
    proc = subprocess.Popen(["node", "server.mjs"], cwd=args.rl, env=env, stdout=log, stderr=log)
    for _ in range(600):
        time.sleep(1)
        with open(log_path) as f:
            if f"listening 127.0.0.1:{port}" in f.read():
                return proc, port
        if proc.poll() is not None:
            sys.exit(f"the model server exited; see {log_path}")
    sys.exit(f"the model server did not start; see {log_path}")


def gen_lines(log_path):
    with open(log_path) as f:
        return [l for l in f if l.startswith("[gen]")]


def embedder(args):
    return "none" if args.mode == "lexical" else "local"


def write_config(path, spec, port, args):
    template, evidence, provider, k = (spec.split(":") + ["8"])[:4]
    with open(path, "w") as f:
        f.write(f"""[search]
default_mode = "{args.mode}"
default_k = {k}
[embedding]
provider = "{embedder(args)}"
[rag]
prompt_template_version = "{template}"
evidence = "{evidence}"
attribution = "{args.attribution}"
max_context_tokens = {args.max_context}
[llm]
provider = "{provider}"
model = "{args.name}"
base_url = "http://127.0.0.1:{port}"
context_tokens = {args.ctx}
max_answer_tokens = {args.max_answer}
timeout_secs = 600
""")


def run_config(spec, items, port, args, log_path):
    cfg = os.path.join(args.work, spec.replace(":", "-") + ".toml")
    write_config(cfg, spec, port, args)
    rows = []
    for item in items:
        before = len(gen_lines(log_path))
        t = time.time()
        out = subprocess.run([args.kebab, "--config", cfg, "--data-dir", args.data, "ask", "--json", "-q", item["question"]],
                             capture_output=True, text=True)
        wall = time.time() - t
        try:
            a = json.loads(out.stdout)
        except json.JSONDecodeError:
            a = {"grounded": False, "refusal_reason": "error", "answer": out.stderr[-200:], "citations": []}
        # The server logs a request when its generation stops, which is after
        # kebab returns when kebab stopped reading at the answer cap.
        reached_model = a.get("refusal_reason") not in ("score_gate", "no_chunks", "no_content_words", "no_index", "error")
        for _ in range(300):
            if not reached_model or len(gen_lines(log_path)) > before:
                break
            time.sleep(1)
        lines = gen_lines(log_path)[before:]
        ttft = [int(m.group(1)) for l in lines for m in [re.search(r"ttft=(-?\d+)ms", l)] if m]
        tokens_in = [int(m.group(1)) for l in lines for m in [re.search(r" in=(\d+)", l)] if m]
        rows.append({
            "id": item["id"], "kind": item["kind"], "grounded": bool(a.get("grounded")),
            "correct": bool(a.get("grounded")) and states_facts(a.get("answer", ""), item.get("facts", [])),
            "stated": states_facts(a.get("answer", ""), item.get("facts", [])),
            "attributed": any(c.get("origin") == "attributed" for c in a.get("citations", [])),
            "model_cited": any(c.get("origin", "model") == "model" for c in a.get("citations", [])),
            "refusal": a.get("refusal_reason"), "ttft_ms": ttft[0] if ttft else None,
            "prompt_tokens": tokens_in[0] if tokens_in else None, "wall_s": round(wall, 1),
            "answer": a.get("answer", "")[:300],
        })
        print(json.dumps(rows[-1]), file=args.rows, flush=True)
    return rows


def summary(spec, rows):
    ans = [r for r in rows if r["kind"] == "answerable"]
    una = [r for r in rows if r["kind"] != "answerable"]
    rate = lambda sel, k: sum(1 for r in sel if r[k]) / len(sel) if sel else 0.0
    ttfts = sorted(r["ttft_ms"] for r in rows if r["ttft_ms"] is not None and r["ttft_ms"] >= 0)
    toks = sorted(r["prompt_tokens"] for r in rows if r["prompt_tokens"])
    med = lambda xs: xs[len(xs) // 2] if xs else None
    reasons = {}
    for r in rows:
        if r["refusal"]:
            reasons[r["refusal"]] = reasons.get(r["refusal"], 0) + 1
    return (f"{spec:28} answerable n={len(ans):2} grounded {rate(ans, 'grounded'):.2} correct {rate(ans, 'correct'):.2} "
            f"(stated ungrounded too {rate(ans, 'stated'):.2}) attributed {rate(ans, 'attributed'):.2} "
            f"model-cited {rate(ans, 'model_cited'):.2} | unanswerable n={len(una):2} grounded {rate(una, 'grounded'):.2} | "
            f"median ttft {med(ttfts)} ms, median prompt {med(toks)} tok, total {sum(r['wall_s'] for r in rows):.0f} s | refusals {reasons}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kebab", default=os.path.join(ROOT, "target/debug/kebab"))
    p.add_argument("--rl", default="/tmp/rl", help="a copy of ../shared/real-llm with node_modules installed")
    p.add_argument("--model", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--book", default=os.path.join(ROOT, "../shared/eval/rust-book-en/src"))
    p.add_argument("--set", default=os.path.join(ROOT, "fixtures/labelled/rust-book-en.jsonl"))
    p.add_argument("--work", default="/tmp/real-llm-work")
    p.add_argument("--config", action="append", required=True, help="TEMPLATE:EVIDENCE:PROVIDER")
    p.add_argument("--split", choices=["dev", "test"], default="test")
    p.add_argument("--mode", choices=["lexical", "hybrid"], default="lexical")
    p.add_argument("--answerable", type=int, default=30)
    p.add_argument("--unanswerable", type=int, default=15)
    p.add_argument("--attribution", default="auto")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--max-context", type=int, default=6000)
    p.add_argument("--max-answer", type=int, default=200)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    args.data = os.path.join(args.work, "data" if args.mode == "lexical" else "data-hybrid")
    if not os.path.exists(os.path.join(args.data, "kebab.db")):
        cfg = os.path.join(args.work, f"ingest-{args.mode}.toml")
        with open(cfg, "w") as f:
            f.write(f'[search]\ndefault_mode = "{args.mode}"\n[embedding]\nprovider = "{embedder(args)}"\n')
        if args.mode == "hybrid":
            subprocess.run([args.kebab, "--config", cfg, "--data-dir", args.data, "models", "install"], check=True)
        subprocess.run([args.kebab, "--config", cfg, "--data-dir", args.data, "ingest", "-q", args.book], check=True)
    items = [json.loads(l) for l in open(args.set) if l.strip()]
    items = [i for i in items if in_split(i["id"], args.split)]
    answerable = [i for i in items if i["kind"] == "answerable"][: args.answerable]
    kinds = ("near_miss", "off_topic", "partial")
    unanswerable = in_turn([[i for i in items if i["kind"] == k] for k in kinds])[: args.unanswerable]
    # One log per run: a server left over from another run cannot write into it.
    log_path = os.path.join(args.work, f"server-{os.getpid()}.log")
    proc, port = start_server(args, log_path)
    # A terminated harness stops its model server too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.rows = open(os.path.join(args.work, "rows.jsonl"), "a")
    try:
        results = []
        for spec in args.config:
            print(f"# {spec} ({args.split}): {len(answerable)} answerable + {len(unanswerable)} unanswerable", flush=True)
            rows = run_config(spec, answerable + unanswerable, port, args, log_path)
            results.append(summary(spec, rows))
            print(results[-1], flush=True)
        print("\n".join(["", f"model {args.name} ({os.path.basename(args.model)}), {args.threads} threads, {args.mode}, attribution {args.attribution}"] + results))
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
