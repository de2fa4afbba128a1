#!/usr/bin/env bash
# Builds the web app with trunk and serves it on http://127.0.0.1:${PORT:-8080}/,
# installing what is missing first (wasm32 target, trunk, wasm-bindgen-cli).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT="${PORT:-8080}"
banner "install missing tools"
ensure_wasm_target
ensure_trunk
ensure_wasm_bindgen_cli
banner "build and serve"
echo "ovsdb-scope will be at: http://127.0.0.1:$PORT/"
exec trunk serve --release --address 127.0.0.1 --port "$PORT" --no-autoreload
