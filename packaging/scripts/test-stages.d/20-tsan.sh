#!/usr/bin/env bash
# stage: tsan
# ThreadSanitizer (build-tsan/, the tsan preset): builds only the scheduler and engine host
# tests and runs them with tests/tsan.supp (Qt internals only, each line says why).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
cd "$HEARTH_ROOT"
cmake --preset tsan >/dev/null
cmake --build --preset tsan --parallel "$(nproc)"
# Without address randomisation: TSan's fixed shadow layout fails ("unexpected memory mapping")
# on kernels with high mmap entropy (vm.mmap_rnd_bits = 32); setarch -R avoids that.
setarch "$(uname -m)" -R ctest --preset tsan
