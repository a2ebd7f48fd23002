#!/usr/bin/env bash
# The conformance oracle: llama-cpp-python (which vendors and builds llama.cpp) in its own
# Python environment in the cache folder. The wheel is built from source once (10–15 minutes
# on 2 cores) and kept in $HEARTH_CACHE/oracle-wheels; later runs install it in seconds.
# A test dependency only: nothing in Hearth links or loads llama.cpp. Version 0.3.36 vendors
# llama.cpp at ggml-org/llama.cpp@0c1e57098 (its CHANGELOG).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=0.3.36
venv="$HEARTH_CACHE/oracle-venv"
wheels="$HEARTH_CACHE/oracle-wheels"
want="llama-cpp-python==$version jinja2==3.1.6 numpy==2.4.6"
stamp="$venv/.hearth-oracle"
if [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  hearth_log "oracle ready: llama-cpp-python $version in $venv"; exit 0
fi
mkdir -p "$wheels"
if ! ls "$wheels"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
  hearth_ensure_venv
  hearth_log "building llama-cpp-python $version from source (once; 10–15 minutes)"
  # Only the library the Python package loads: no multimodal library, tools, examples or tests.
  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$HEARTH_VENV/bin/python3" -m pip wheel --quiet \
    --disable-pip-version-check --no-deps -w "$wheels" "llama-cpp-python==$version"
fi
rm -rf "$venv"
python3 -m venv "$venv"
# shellcheck disable=SC2086
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --find-links "$wheels" $want
echo "$want" > "$stamp"
hearth_log "oracle installed: llama-cpp-python $version"
