#!/usr/bin/env bash
# The README's second command (and all that .ci/run calls): installs what is missing, builds
# the release and sanitizer trees, fetches the test models, and runs the whole suite through
# CTest. Prints the time of each stage and the total.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
scripts="$HEARTH_ROOT/packaging/scripts"
cd "$HEARTH_ROOT"  # ctest --preset reads CMakePresets.json from here
declare -a stage_names=() stage_secs=()
start_all=$(hearth_now)
stage() {  # stage NAME COMMAND...
  local name="$1" t0; shift
  t0=$(hearth_now)
  hearth_log "== $name"
  "$@"
  stage_names+=("$name"); stage_secs+=($(( $(hearth_now) - t0 )))
  hearth_log "== $name: $(( $(hearth_now) - t0 )) s"
}
summary() {
  local i
  echo "Stage times:"
  for i in "${!stage_names[@]}"; do printf '  %-24s %5d s\n' "${stage_names[$i]}" "${stage_secs[$i]}"; done
  printf '  %-24s %5d s\n' total $(( $(hearth_now) - start_all ))
}
trap summary EXIT

if [ "${CI:-}" = true ] && [ ! -d "$HEARTH_ROOT/../shared/testdata" ]; then
  hearth_die "CI=true but ../shared/testdata is missing"
fi
stage packages bash "$scripts/install-deps.sh" test
# The packaging test's clean Debian root downloads while the CPU builds (it is cached after
# the first run; the package stage waits for it).
if [ "$(id -u)" -eq 0 ] && command -v mmdebstrap >/dev/null; then
  mkdir -p "$HEARTH_CACHE/logs"
  ( source "$scripts/pkgroot.sh" && pkgroot_base_tar ) >"$HEARTH_CACHE/logs/pkgroot-prefetch.log" 2>&1 &
fi
stage "models + test python" bash -c "bash '$scripts/fetch-models.sh' test && bash '$scripts/setup-python.sh'"
stage "oracle" bash "$scripts/setup-oracle.sh"
stage "build (release)" bash "$scripts/build.sh" release
stage "build (asan+ubsan)" bash "$scripts/build.sh" asan
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
stage "tests (release)" ctest --preset release -j "$(nproc)"
stage "tests (asan+ubsan)" ctest --preset asan -j "$(nproc)"
# Further stages, one file per area (packaging, fuzzing, other toolchains), in name order.
# Each file's second line is "# stage: NAME".
for extra in "$scripts"/test-stages.d/*.sh; do
  [ -e "$extra" ] || continue
  stage "$(sed -n 's/^# stage: //p' "$extra" | head -n1)" bash "$extra"
done
