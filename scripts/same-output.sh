#!/usr/bin/env bash
# Checks that two kebab binaries give the same answer.v1 / session.v1 for the
# same inputs (a refactoring must not change them): each asks the same
# questions over fixtures/research/ (extractive model, lexical, no server) in a
# session and alone, then prints the session as JSON and as Markdown; clock
# fields (timestamps, latencies) are masked and the two runs are diffed.
#   scripts/same-output.sh OLD_BIN NEW_BIN
set -u
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {
    local bin=$1 out=$2
    mkdir -p "$out"
    printf '[llm]\nprovider = "extractive"\n[embedding]\nprovider = "none"\n[search]\ndefault_mode = "lexical"\n' > "$out/config.toml"
    local k="$bin --config $out/config.toml --data-dir $out/data"
    $k ingest "$root/fixtures/research" > /dev/null 2>&1
    mask() { sed -E 's/"(created_at|updated_at|indexed_at)": "[^"]*"/"\1": "T"/g; s/"latency_ms": [0-9]+/"latency_ms": 0/g'; }
    local i=0
    while IFS= read -r q; do
        i=$((i + 1))
        $k --json ask --session work "$q" 2> /dev/null | mask > "$out/ask$i.json"
    done <<'QUESTIONS'
What did the honey samples show?
What did the Wexmoor hives average in 2024?
How long does that take?
Why?
what is it?
How do I bake bread?
QUESTIONS
    $k --json ask "What did the Wexmoor hives average in 2024?" 2> /dev/null | mask > "$out/single.json"
    $k --json sessions show work 2> /dev/null | mask > "$out/session.json"
    $k sessions export work 2> /dev/null | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z/T/g; s/[0-9]+ ms/N ms/g' > "$out/export.md"
    rm -rf "$out/data" "$out/config.toml"
}
run "$1" "$work/a"
run "$2" "$work/b"
grep -h '"grounded"' "$work"/a/ask*.json | sort | uniq -c
if diff -r "$work/a" "$work/b"; then
    echo "same output: $(ls "$work/a" | wc -l) documents"
else
    exit 1
fi
