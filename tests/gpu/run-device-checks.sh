#!/usr/bin/env bash
# The CUDA backend's device check, for a lent GPU machine (nvcc, CMake, ninja; no Qt): builds
# kernels/, the tokenizer-free engine and the gpu tests for sm_90 (-DHEARTH_DEVICE_CHECK=ON),
# writes Q4_0 synthetic models of four shapes while the parity tests run, times the decode mat-vec
# kernels alone in each layout (HEARTH_CUDA_PLANAR, HEARTH_CUDA_PLANAR_ROWS), then benchmarks
# prefill and decode with decode as a share of the measured read bandwidth, then prints where the
# 8B shape's time goes, operator by operator, and ncu's counters for one layer's decode kernels.
# Aims at < 5 min.
# Usage: tests/gpu/run-device-checks.sh [BUILD_DIR]   (logs also go to $OUT when it is set)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-device}
models=${HEARTH_DEVICE_MODELS:-/tmp/hearth-device-models}
logs=${OUT:-$build/device-logs}
shapes=(smollm2-135m gemma3-270m tinyllama-1.1b llama-8b)
mkdir -p "$logs" "$models"
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*"; }

step "configure + build (sm_90)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_DEVICE_CHECK=ON > "$logs/configure.log" 2>&1 \
  || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" > "$logs/build.log" 2>&1 || { grep -E "error|FAILED" "$logs/build.log" | head -30; exit 1; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

step "writing synthetic models in the background"
pids=()
for s in "${shapes[@]}"; do
  "$build/bin/hearth-gpu-bench" --dir "$models" --write-only "$s" > "$logs/write-$s.log" 2>&1 &
  pids+=($!)
done

# The 8B shape in Q4_K too (most of a Q4_K_M file), benchmarked last while time remains.
timeout 150 "$build/bin/hearth-gpu-bench" --dir "$models" --type Q4_K --write-only llama-8b > "$logs/write-llama-8b-q4k.log" 2>&1 &
q4k_pid=$!

step "parity tests (label gpu; a skip counts as a failure here)"
HEARTH_GPU_REQUIRED=1 timeout 240 ctest --test-dir "$build" -L gpu -V > "$logs/ctest.log" 2>&1
tests_rc=$?
grep -E "FAIL|checks passed|tests passed|Passed|Failed|SKIP" "$logs/ctest.log" | head -60

step "mat-vec kernels alone: GGUF's blocks, then planar rows (4 rows a block, 1, chosen by size); Q8_0, Q4_K, Q6_K"
for cfg in HEARTH_CUDA_PLANAR=0 HEARTH_CUDA_PLANAR_ROWS=4 HEARTH_CUDA_PLANAR_ROWS=1 HEARTH_CUDA_PLANAR=1; do
  echo "-- $cfg"
  env "$cfg" timeout 60 "$build/bin/hearth-gpu-bench" --kernels-only 2>&1 | grep -E "mat-vec|decode bound|no CUDA"
done
for type in Q8_0 Q4_K Q6_K; do
  echo "-- $type, planar, then GGUF's blocks"
  timeout 60 "$build/bin/hearth-gpu-bench" --kernels-only --type $type 2>&1 | grep -E "mat-vec|decode bound|no CUDA"
  HEARTH_CUDA_PLANAR=0 timeout 60 "$build/bin/hearth-gpu-bench" --kernels-only --type $type 2>&1 | grep -E "decode bound"
done

step "waiting for the models"
write_rc=0
for p in "${pids[@]}"; do wait "$p" || write_rc=1; done
cat "$logs"/write-*.log

step "benchmark"
bench_rc=1
if [[ $write_rc -eq 0 ]]; then
  # The essential rows first (8B, 1.1B), then the small shapes, then the 8B split at half its size.
  timeout 200 "$build/bin/hearth-gpu-bench" --dir "$models" --no-kernels-alone --prefill 512 --decode 32 --split-half llama-8b \
    llama-8b tinyllama-1.1b smollm2-135m gemma3-270m 2>&1 | tee "$logs/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi
if [[ $write_rc -eq 0 && $((SECONDS - start)) -lt 200 ]]; then
  step "the 8B shape with the kernels before planar rows, grouped attention and fused inputs (HEARTH_CUDA_PLANAR=0, HEARTH_CUDA_ATTENTION=heads, HEARTH_CUDA_FUSED=0)"
  HEARTH_CUDA_PLANAR=0 HEARTH_CUDA_ATTENTION=heads HEARTH_CUDA_FUSED=0 timeout 60 "$build/bin/hearth-gpu-bench" --dir "$models" --no-kernels-alone --prefill 512 \
    --decode 32 llama-8b 2>&1 | tee "$logs/bench-file-rows.log"
fi
if [[ $write_rc -eq 0 && $((SECONDS - start)) -lt 220 ]]; then
  step "the 8B shape with today's kernels but the norms, RoPE and residual adds as separate launches (HEARTH_CUDA_FUSED=0)"
  HEARTH_CUDA_FUSED=0 timeout 45 "$build/bin/hearth-gpu-bench" --dir "$models" --no-kernels-alone --prefill 512 \
    --decode 32 llama-8b 2>&1 | grep -E "RESULT|launches"
fi
if [[ $write_rc -eq 0 && $((SECONDS - start)) -lt 230 ]]; then
  step "the 8B shape's prefill in passes of 128 rows, as before (HEARTH_CUDA_ROWS_PER_PASS=128; the default is 512)"
  HEARTH_CUDA_ROWS_PER_PASS=128 timeout 40 "$build/bin/hearth-gpu-bench" --dir "$models" --no-kernels-alone \
    --prefill 512 --decode 4 llama-8b 2>&1 | grep -E "RESULT|first prefill"
fi
if [[ $write_rc -eq 0 ]]; then
  step "operator profile of the 8B shape (HEARTH_CUDA_PROFILE=1: each operator timed alone, graphs off)"
  HEARTH_CUDA_PROFILE=1 timeout 90 "$build/bin/hearth-gpu-bench" --dir "$models" --prefill 512 --decode 8 llama-8b \
    > "$logs/profile-stdout.log" 2> "$logs/profile.log"
  head -25 "$logs/profile.log"
fi
if [[ $write_rc -eq 0 ]] && command -v ncu > /dev/null; then
  # Hardware counters of one layer's decode kernels (the warm-up's first 1-token step: Q, K, V,
  # attention, output, gate, up, down): memory throughput, occupancy and what the warps wait on.
  step "ncu: the decode mat-vec and attention kernels (first launches)"
  timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats -k regex:"matvec|attentionSplit" --launch-count 8 \
    "$build/bin/hearth-gpu-bench" --dir "$models" --no-kernels-alone --prefill 16 --decode 2 llama-8b > "$logs/ncu.log" 2>&1
  grep -E "^  [a-zA-Z].*\(|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Block Size|Grid Size" \
    "$logs/ncu.log" | head -90
fi
if wait "$q4k_pid" && [[ $((SECONDS - start)) -lt 260 ]]; then
  step "the 8B shape in Q4_K (planar kernel, then GGUF's blocks for the old one)"
  timeout 60 "$build/bin/hearth-gpu-bench" --dir "$models" --type Q4_K --no-kernels-alone --prefill 512 --decode 32 \
    llama-8b 2>&1 | tee "$logs/bench-q4k.log"
  HEARTH_CUDA_PLANAR=0 timeout 45 "$build/bin/hearth-gpu-bench" --dir "$models" --type Q4_K --no-kernels-alone \
    --prefill 512 --decode 32 llama-8b 2>&1 | tail -4
fi
step "done: tests rc=$tests_rc, model writing rc=$write_rc, bench rc=$bench_rc"
[[ $tests_rc -eq 0 && $write_rc -eq 0 && $bench_rc -eq 0 ]]
