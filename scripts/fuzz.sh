#!/usr/bin/env bash
# Fuzzing, run by hand (CI replays the committed corpus in tests/fuzz_corpus.rs).
#
# Runs each cargo-fuzz target in fuzz/ for a fixed time, seeded from the
# committed corpus (fuzz/corpus/<target>/) and the inputs that once crashed
# (fuzz/regressions/<target>/), then prints one row per target: runs, execs
# per second, corpus size, crashes. New inputs go to a scratch corpus under
# fuzz/target/, so the committed corpus only changes when asked (--cmin).
#
#   scripts/fuzz.sh                     # every target, 300 s each
#   scripts/fuzz.sh 600 fts_query       # one target, 10 minutes
#   scripts/fuzz.sh 60 --cmin           # then minimise into fuzz/corpus/
#
# Arguments: [SECONDS_PER_TARGET] [TARGET...]
# Options:
#   --cmin            after the runs, rewrite each fuzz/corpus/<target>/ as the
#                     hand-written seeds (seed-*) plus 40 inputs of at most
#                     4 KB sampled (by hash name) from a minimal set covering
#                     the code edges of the committed and scratch corpora
#                     (libFuzzer -set_cover_merge=1 -use_counters=0): the full
#                     set is hundreds of files and megabytes, too much for git
#   --sanitizer S     address (default) or none
#
# Needs the nightly toolchain (`rustup toolchain install nightly`); installs
# cargo-fuzz if missing. One fuzzing process at a time (no -jobs/-workers):
# the numbers are for a single core. A crash leaves its input in
# fuzz/artifacts/<target>/ and the libFuzzer log in fuzz/target/fuzz-logs/.
# Exits 1 if any target crashed (a panic, a failed property check, an
# AddressSanitizer report, a leak, an input running over 10 s or 2 GB).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
secs=300 cmin=0 sanitizer=address targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --cmin) cmin=1 ;;
        --sanitizer) sanitizer="$2"; shift ;;
        [0-9]*) secs="$1" ;;
        -*) echo "fuzz.sh: unknown option $1 (see the top of $0)" >&2; exit 2 ;;
        *) targets+=("$1") ;;
    esac
    shift
done

cd "$repo/fuzz"
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain; install it with: rustup toolchain install nightly" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz ..." >&2
    cargo install cargo-fuzz --locked
fi
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

fuzz=(cargo +nightly fuzz run -O --sanitizer "$sanitizer")
cargo +nightly fuzz build -O --sanitizer "$sanitizer"
mkdir -p target/fuzz-logs

# One libFuzzer statistic from a log: `stat::NAME: VALUE`.
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }

rows=() failed=0
for t in "${targets[@]}"; do
    work="target/corpus-work/$t"
    log="target/fuzz-logs/$t.log"
    mkdir -p "$work" "corpus/$t" "artifacts/$t"
    seeds=("corpus/$t")
    [ -d "regressions/$t" ] && seeds+=("regressions/$t")
    touch "target/fuzz-logs/$t.start"
    echo "== $t: ${secs} s (log: fuzz/$log)" >&2
    status=0
    "${fuzz[@]}" "$t" "$work" "${seeds[@]}" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 >"$log" 2>&1 || status=$?
    crashes=$(find "artifacts/$t" -type f -newer "target/fuzz-logs/$t.start" | wc -l)
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
        crashes=1 # a failure that left no artifact (e.g. a build error): still a failure
    fi
    if [ "$crashes" -gt 0 ]; then
        failed=1
        grep -m5 -E "panicked at|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY" "$log" >&2 || tail -20 "$log" >&2
        find "artifacts/$t" -type f -newer "target/fuzz-logs/$t.start" | sed 's|^|input: fuzz/|' >&2
    fi
    runs=$(stat number_of_executed_units "$log")
    rate=$(stat average_exec_per_sec "$log")
    # The corpus libFuzzer held at the end (its last status line: `corp: N/SIZE`).
    corpus=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    rows+=("$(printf '%-14s %12s %10s %8s %8s %7s' "$t" "${runs:-?}" "${rate:-?}" "${corpus:-?}" "$crashes" "$secs")")
done

if [ "$cmin" -eq 1 ]; then
    for t in "${targets[@]}"; do
        fresh="target/cmin/$t"
        rm -rf "$fresh" && mkdir -p "$fresh"
        "${fuzz[@]}" "$t" "$fresh" "corpus/$t" "target/corpus-work/$t" -- -set_cover_merge=1 -use_counters=0 \
            -max_len=8192 >"target/fuzz-logs/$t.cmin.log" 2>&1
        find "corpus/$t" -type f ! -name 'seed-*' -delete
        find "$fresh" -type f -size -4097c ! -name 'seed-*' -printf '%f\n' | sort | head -40 | while read -r f; do
            cp "$fresh/$f" "corpus/$t/$f"
        done
        echo "$t: minimal set $(find "$fresh" -type f | wc -l) files; committed $(find "corpus/$t" -type f | wc -l)" >&2
    done
fi

printf '%-14s %12s %10s %8s %8s %7s\n' target runs execs/s corpus crashes seconds
printf '%s\n' "${rows[@]}"
exit "$failed"
