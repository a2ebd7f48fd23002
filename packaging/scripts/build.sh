#!/usr/bin/env bash
# Configures and builds one build tree through ccache, from CMakePresets.json.
# Usage: build.sh [release|asan] [TARGET...]
#   release: build/      — everything (app, GUI, tests)
#   asan:    build-asan/ — -O1 ASan+UBSan, no GUI; runs the unit and tiny-model tests
#   TARGET...: only these targets and what they need (run.sh: hearth, hearth-cli), else all
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
preset="${1:-release}"
shift || true
case "$preset" in release|asan) ;; *) hearth_die "usage: build.sh [release|asan]" ;; esac
cd "$HEARTH_ROOT"
# CI builds the release tree with warnings as errors (HEARTH_WERROR); elsewhere they stay warnings.
werror=OFF
if [ "${CI:-}" = true ] && [ "$preset" = release ]; then werror=ON; fi
cmake --preset "$preset" -DHEARTH_WERROR="$werror" >/dev/null
if [ "$#" -gt 0 ]; then
  cmake --build --preset "$preset" --parallel "$(nproc)" --target "$@"
else
  cmake --build --preset "$preset" --parallel "$(nproc)"
fi
