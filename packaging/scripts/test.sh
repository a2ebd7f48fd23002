#!/usr/bin/env bash
# The README's second command (and all that .ci/run calls): installs what is missing, builds
# the release and sanitizer trees, fetches the test models, and runs the whole suite through
# CTest, then the extra stages of test-stages.d/. Every stage runs, unless a stage it needs
# failed (then it is reported as skipped); a failure does not hide the stages after it. At the
# end: each stage with its time and result, then one verdict line; the exit status is non-zero
# when any stage failed or was skipped.
set -uo pipefail
# The disk cache of repacked weights (engine/model/pack_cache.h) is the user's: no stage of the
# test command writes to it (test_pack_cache points it at a folder of its own).
export HEARTH_PACK_CACHE=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
scripts="$HEARTH_ROOT/packaging/scripts"
cd "$HEARTH_ROOT"  # ctest --preset reads CMakePresets.json from here
declare -a stage_names=() stage_secs=() stage_results=()
declare -A stage_ok=()
start_all=$(hearth_now)

# stage NAME [--needs "STAGE|STAGE"] COMMAND...: runs COMMAND unless a stage it needs did not
# pass; records the result either way.
stage() {
  local name="$1" needs="" t0 rc need result
  shift
  if [ "${1:-}" = --needs ]; then needs="$2"; shift 2; fi
  t0=$(hearth_now)
  result=""
  if [ -n "$needs" ]; then
    IFS='|' read -r -a wanted <<<"$needs"
    for need in "${wanted[@]}"; do
      if [ "${stage_ok[$need]:-}" != 1 ]; then result="skipped (needs '$need', which did not pass)"; break; fi
    done
  fi
  if [ -z "$result" ]; then
    hearth_log "== $name"
    "$@"
    rc=$?
    if [ "$rc" -eq 0 ]; then result=ok; stage_ok[$name]=1; else result="FAILED (exit $rc)"; fi
  fi
  stage_names+=("$name"); stage_secs+=($(( $(hearth_now) - t0 ))); stage_results+=("$result")
  hearth_log "== $name: $result, $(( $(hearth_now) - t0 )) s"
}

summary() {
  local status=$? i failed=() n=${#stage_names[@]}
  echo "Stages:"
  for i in "${!stage_names[@]}"; do
    printf '  %-36s %5d s  %s\n' "${stage_names[$i]}" "${stage_secs[$i]}" "${stage_results[$i]}"
    [ "${stage_results[$i]}" = ok ] || failed+=("${stage_names[$i]}")
  done
  printf '  %-36s %5d s\n' total $(( $(hearth_now) - start_all ))
  if [ ${#failed[@]} -eq 0 ] && [ "$status" -eq 0 ]; then
    echo "verdict: PASS, all $n stages passed"
  else
    local joined; joined=$(printf '%s, ' "${failed[@]}"); joined=${joined%, }
    echo "verdict: FAIL, ${#failed[@]} of $n stages did not pass${joined:+: $joined}$([ "$status" -ne 0 ] && [ ${#failed[@]} -eq 0 ] && echo " (the script stopped with exit $status before its stages)")"
    [ "$status" -ne 0 ] || status=1
  fi
  exit "$status"
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
# llama.cpp's own llama-server (and llama-bench), built once from the oracle's sources and cached
# (the "oracle" stage builds them with the libraries the oracle loads; this stage finds them):
# test_remote runs the window's remote mode against it.
stage "llama.cpp tools" bash "$scripts/build-llama-tools.sh"
stage "tests (release)" --needs "build (release)" ctest --preset release -j "$(nproc)"
stage "tests (asan+ubsan)" --needs "build (asan+ubsan)" ctest --preset asan -j "$(nproc)"
# Further stages, one file per area (CPU levels, packaging, fuzzing, other toolchains), in name
# order. Each file's second line is "# stage: NAME"; an optional "# needs: STAGE|STAGE" line
# names the stages whose success it needs (test-stages.d/README.md).
for extra in "$scripts"/test-stages.d/*.sh; do
  [ -e "$extra" ] || continue
  name=$(sed -n 's/^# stage: //p' "$extra" | head -n1)
  needs=$(sed -n 's/^# needs: //p' "$extra" | head -n1)
  if [ -n "$needs" ]; then stage "$name" --needs "$needs" bash "$extra"
  else stage "$name" bash "$extra"; fi
done
