#!/usr/bin/env bash
# Configures and builds one build tree (through ccache). Usage: build.sh [release|asan]
#   release: $HEARTH_ROOT/build — everything (app, GUI, tests)
#   asan:    $HEARTH_ROOT/build-asan — -O1 ASan+UBSan, no GUI; runs unit and tiny-model tests
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
kind="${1:-release}"
export CCACHE_DIR="${CCACHE_DIR:-$HEARTH_CACHE/ccache}"
jobs=$(nproc)
case "$kind" in
  release) dir="$HEARTH_BUILD"; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) dir="$HEARTH_ROOT/build-asan"; flags=(-DCMAKE_BUILD_TYPE=Debug -DHEARTH_SANITIZE=ON -DHEARTH_BUILD_GUI=OFF) ;;
  *) hearth_die "usage: build.sh [release|asan]" ;;
esac
cmake -S "$HEARTH_ROOT" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" --parallel "$jobs"
