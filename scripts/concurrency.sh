#!/usr/bin/env bash
# Concurrency load, run by hand (CI runs the short version in tests/concurrency.rs).
#
# On one database at once: a REPL session asking question after question, an
# ingest of a generated note set, and `kebab ask --session` workers looping
# (some sharing one session, so they race for the next turn number). Checks
# that every process exits 0 with no "locked"/"busy"/"panicked" in its output,
# that every session holds exactly the turns asked, numbered 0..n-1, each with
# its answer row, and that `PRAGMA integrity_check` says ok. It is the ignored
# test `heavy_concurrent_load_loses_no_turn_and_hits_no_lock`, scaled here:
#
#   scripts/concurrency.sh                     # 2000 notes, 6 + 4 workers, 25 asks each, 3 runs
#   scripts/concurrency.sh --notes 5000 --workers 8 --shared 6 --asks 40 --runs 1
#
# Options:
#   --notes N    notes the concurrent ingest adds (default 2000; 24 sections each)
#   --workers N  workers with a session of their own (default 6)
#   --shared N   workers sharing the session `shared` (default 4)
#   --asks N     asks per worker, and REPL questions, at least (default 25);
#                all keep asking until the ingest is done
#   --runs N     repetitions, each on a fresh database (default 3)
#
# Builds the test binary with cargo (debug profile, as `cargo test` does).
# Prints the figures of each run; exits 1 on any failure.
set -euo pipefail

cd "$(dirname "$0")/.."
notes=2000 workers=6 shared=4 asks=25 runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --notes) notes="$2"; shift 2 ;;
        --workers) workers="$2"; shift 2 ;;
        --shared) shared="$2"; shift 2 ;;
        --asks) asks="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

export KEBAB_CONCURRENCY_NOTES="$notes" KEBAB_CONCURRENCY_WORKERS="$workers"
export KEBAB_CONCURRENCY_SHARED="$shared" KEBAB_CONCURRENCY_ASKS="$asks"
cargo test --locked --test concurrency --no-run 2>/dev/null
failed=0
for run in $(seq 1 "$runs"); do
    log="$(mktemp)"
    if cargo test --locked --test concurrency heavy_concurrent_load -- --ignored --nocapture >"$log" 2>&1; then
        echo "run $run: ok — $(grep -m1 'turns (' "$log" | sed 's/^ *//')"
    else
        failed=1
        echo "run $run: FAILED"
        grep -A20 'problems, the first' "$log" | head -60
    fi
    rm -f "$log"
done
exit "$failed"
