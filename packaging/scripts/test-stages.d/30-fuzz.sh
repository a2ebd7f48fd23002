#!/usr/bin/env bash
# stage: fuzz
# libFuzzer targets (build-fuzz/, the fuzz preset: clang-19, ASan + UBSan; kernels/, engine/,
# fuzz/ and, for the store target, app/store with Qt Core and SQLite): builds them and their
# seeds, then runs each briefly (ctest label fuzz: gguf, tokenizer, chat_template, kv_import,
# store); any crash, sanitizer report, leak or timeout fails. Long runs: fuzz-campaign.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
command -v clang++-19 >/dev/null || hearth_die "clang++-19 is missing (bash packaging/scripts/install-deps.sh test)"
cd "$HEARTH_ROOT"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"
ctest --preset fuzz -j "$(nproc)"
