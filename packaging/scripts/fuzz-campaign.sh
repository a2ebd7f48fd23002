#!/usr/bin/env bash
# The fuzzing campaign of issue #10: builds the fuzz preset (build-fuzz/, clang-19) and runs each
# libFuzzer target for FUZZ_RUNS executions (default 10^6) or FUZZ_SECONDS (default 1200, i.e.
# 20 minutes), whichever comes first, one target after another, at low priority.
# Usage: fuzz-campaign.sh [TARGET...]     (targets: gguf tokenizer chat_template kv_import store;
# default all)
# The corpus grows in $HEARTH_CACHE/fuzz-corpus/TARGET and is kept between campaigns; logs and
# crash inputs go to build-fuzz/campaign/. A finding stops that target and makes the script
# exit 1: fix it, then commit the input to fuzz/regressions/TARGET/ (the fuzz CTest replays it;
# for gguf, tests/engine/model/test_gguf_regressions.cpp too). Prints executions, time and coverage
# (cov: code edges, ft: features) per target.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
runs="${FUZZ_RUNS:-1000000}"
seconds="${FUZZ_SECONDS:-1200}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gguf tokenizer chat_template kv_import store)
cd "$HEARTH_ROOT"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"
out="$HEARTH_ROOT/build-fuzz/campaign"
# Symbolized stack traces in findings: LLVM 19's symbolizer (package llvm-19) when installed.
symbolizer=/usr/lib/llvm-19/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
mkdir -p "$out"
failed=0
for t in "${targets[@]}"; do
  corpus="$HEARTH_CACHE/fuzz-corpus/$t"
  mkdir -p "$corpus"
  dirs=("$corpus" "build-fuzz/fuzz/seeds/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  hearth_log "fuzz_$t: up to $runs executions or $seconds s"
  start=$(hearth_now)
  status=0
  nice -n 10 "build-fuzz/fuzz/fuzz_$t" -runs="$runs" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$t-" \
    "${dirs[@]}" >"$out/$t.log" 2>&1 || status=$?
  last=$(grep -E '^#[0-9]+' "$out/$t.log" | tail -n1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -n1)
  printf '%-14s %s executions in %s s; last status: %s\n' "$t" "${execs:-?}" "$(( $(hearth_now) - start ))" "$last"
  if [ "$status" -ne 0 ]; then
    failed=1
    hearth_log "fuzz_$t found something (exit $status): see $out/$t.log and $out/$t-*"
  fi
done
exit "$failed"
