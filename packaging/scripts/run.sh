#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, fetches the default model and
# starts Hearth with it — the GUI when a display exists, otherwise `hearth-cli chat`. It builds
# only what it starts (hearth and hearth-cli, or hearth-cli alone without a display), not the
# tests: test.sh builds everything.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$HEARTH_ROOT/packaging/scripts/install-deps.sh" run
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then targets=(hearth hearth-cli); else targets=(hearth-cli); fi
bash "$HEARTH_ROOT/packaging/scripts/build.sh" release "${targets[@]}"
bash "$HEARTH_ROOT/packaging/scripts/fetch-models.sh" default
model="$HEARTH_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$HEARTH_BUILD/app/hearth" --model "$model"
fi
exec "$HEARTH_BUILD/app/hearth-cli" chat --model "$model"
