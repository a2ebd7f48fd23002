#!/usr/bin/env bash
# stage: cpu levels (HEARTH_CPU)
# needs: build (release)
# Runs the kernel parity and golden tests (ctest label cpu-levels: hearth_add_test(... CPU_LEVELS) in the tests.cmake files) again
# at each HEARTH_CPU level below the best this host runs (the release test stage ran the best),
# and says which levels it skipped because the host cannot run them. Every level gives bitwise
# the same results, so the same tests and tolerances apply. The reference level leaves out
# test_gemma3 (Gemma 3 270M through the scalar kernels takes over 5 minutes on 2 cores); its
# bitwise equality with the AVX2 path is checked by the parity tests at every level.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
cd "$HEARTH_ROOT"
cli="$HEARTH_BUILD/app/hearth-cli"
info=$("$cli" info)
sed -n '1,/^Compute backends:/p' <<<"$info" | sed '$d' >&2
runs=$(sed -n 's/^  levels this CPU runs: //p' <<<"$info")
[ -n "$runs" ] || hearth_die "hearth-cli info printed no 'levels this CPU runs' line"
best=${runs##* }
ran=() skipped=()
for level in reference avx2 avx2-vnni avx512; do
  if [[ " $runs " != *" $level "* ]]; then
    skipped+=("$level (this CPU or OS cannot run it)"); continue
  fi
  if [ "$level" = "$best" ]; then
    hearth_log "HEARTH_CPU=$level: the best level here, run by the release test stage"; continue
  fi
  exclude=()
  [ "$level" = reference ] && exclude=(-E '^test_gemma3$')
  hearth_log "HEARTH_CPU=$level: kernel parity and golden tests"
  t0=$(hearth_now)
  HEARTH_CPU="$level" ctest --preset release -L cpu-levels "${exclude[@]}" -j "$(nproc)"
  ran+=("$level ($(( $(hearth_now) - t0 )) s)")
done
hearth_log "levels run here: ${ran[*]:-none} (and $best in the release stage)"
hearth_log "levels skipped: ${skipped[*]:-none}"
