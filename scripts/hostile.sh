#!/usr/bin/env bash
# Hostile input at full size, run by hand (CI runs the small versions in
# tests/hostile_ingest.rs): 100,000 tiny files, and a 50 MB Markdown file both
# over the default size limit (skipped, named) and under a raised one
# (indexed). For each run it prints wall time, peak RSS, database size and
# `PRAGMA integrity_check`, and then times a search over the result.
#
# It builds nothing: build the release binary first and, since other builds
# may replace it, run a copy:
#
#   cargo build --release --locked && cp target/release/kebab /tmp/kebab
#   scripts/hostile.sh /tmp/kebab
#   scripts/hostile.sh target/debug/kebab --files 20000   # a quicker look
#
# Arguments: [BIN] (default: target/release/kebab)
# Options:
#   --files N   tiny files to write (default 100000)
#   --mb N      size of the big Markdown file in MB (default 50)
#   --keep      keep the temp dir (its path is printed)
#
# Vectors are off (`embedding.provider = "none"`): this measures reading,
# chunking and the SQLite writes, not the embedding model.
# Needs bash, python3 (writes the files; its sqlite3 module checks the
# databases) and GNU time (/usr/bin/time) for peak RSS.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="" files=100000 mb=50 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files="$2"; shift 2 ;;
    --mb) mb="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 1 ;;
    *) bin="$1"; shift ;;
  esac
done
bin="${bin:-$repo/target/release/kebab}"
[ -x "$bin" ] || { echo "no kebab binary at $bin (build it: cargo build --release --locked)" >&2; exit 1; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d)"
if [ "$keep" = 1 ]; then echo "temp dir: $work"; else trap 'rm -rf "$work"' EXIT; fi
fail=0

# One kebab home per case: config, data, XDG paths all under $work/NAME.
kebab() {
  local home="$work/$1"; shift
  env -i PATH="$PATH" HOME="$home/home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" NO_COLOR=1 "$bin" "$@"
}

configure() {
  mkdir -p "$work/$1/config/kebab"
  printf '[llm]\nprovider = "extractive"\n[embedding]\nprovider = "none"\n%s' "${2:-}" >"$work/$1/config/kebab/config.toml"
}

# Runs `kebab ARGS` in home $1 under GNU time; prints "wall_s rss_kb" and
# keeps stdout/stderr in $work/$1.out / .err.
timed() {
  local name="$1"; shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" env -i PATH="$PATH" HOME="$work/$name/home" \
    XDG_CONFIG_HOME="$work/$name/config" XDG_DATA_HOME="$work/$name/data" NO_COLOR=1 \
    "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err" || { echo "FAIL: kebab $* exited $?"; cat "$work/$name.err"; fail=1; }
  if grep -q panicked "$work/$name.err"; then echo "FAIL: panic"; cat "$work/$name.err"; fail=1; fi
  cat "$work/$name.time"
}

check_db() {
  local db="$work/$1/data/kebab/kebab.db"
  python3 - "$db" <<'PY'
import os, sqlite3, sys
db = sys.argv[1]
c = sqlite3.connect(db)
ok = c.execute("PRAGMA integrity_check").fetchone()[0]
docs = c.execute("SELECT count(*) FROM documents").fetchone()[0]
chunks = c.execute("SELECT count(*) FROM chunks").fetchone()[0]
size = os.path.getsize(db) + (os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0)
print(f"documents {docs}, chunks {chunks}, database {size / 1e6:.1f} MB, integrity_check {ok}")
sys.exit(0 if ok == "ok" else 1)
PY
}

echo "kebab: $bin"
echo "== $files tiny files"
configure tiny
python3 - "$work/tiny-notes" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 1000:03}")
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"n{i}.md"), "w") as f:
        f.write(f"# Note {i}\n\nword{i} kettle\n")
PY
read -r wall rss < <(timed tiny ingest "$work/tiny-notes")
echo "first ingest: ${wall} s, peak RSS $((rss / 1024)) MB"
check_db tiny || fail=1
read -r wall rss < <(timed tiny ingest "$work/tiny-notes")
echo "second ingest (nothing changed): ${wall} s, peak RSS $((rss / 1024)) MB; $(cat "$work/tiny.out")"
read -r wall rss < <(timed tiny search --mode lexical word77777 kettle)
echo "search: ${wall} s, peak RSS $((rss / 1024)) MB; top hit: $(sed -n 1p "$work/tiny.out")"

echo "== one ${mb} MB Markdown file"
python3 - "$work/big-notes/big.md" "$mb" <<'PY'
import os, sys
path, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    size, i = 0, 0
    while size < mb * 1_000_000:
        s = f"## Section {i}\n\n" + " ".join(f"w{i}x{j}" for j in range(150)) + "\n\n"
        f.write(s)
        size += len(s)
        i += 1
PY
printf '# Small\n\nstill indexed\n' >"$work/big-notes/small.md"
configure big-default
read -r wall rss < <(timed big-default ingest "$work/big-notes")
echo "default limit: ${wall} s, peak RSS $((rss / 1024)) MB; $(grep -m1 'big.md' "$work/big-default.err" || echo 'FAIL: big.md not named'; true)"
grep -q 'workspace.max_file_bytes' "$work/big-default.err" || { echo "FAIL: the skip does not name the setting"; fail=1; }
configure big-raised "[workspace]
max_file_bytes = $(( (mb + 10) * 1000000 ))
"
read -r wall rss < <(timed big-raised ingest "$work/big-notes")
echo "max_file_bytes raised: ${wall} s, peak RSS $((rss / 1024)) MB"
check_db big-raised || fail=1
read -r wall rss < <(timed big-raised search --mode lexical w777x3)
echo "search: ${wall} s; top hit: $(sed -n 1p "$work/big-raised.out")"

if [ "$fail" = 0 ]; then echo "hostile.sh: all ok"; else echo "hostile.sh: FAILED"; exit 1; fi
