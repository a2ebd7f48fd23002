#!/usr/bin/env bash
# The run-time fallback when CUDA is absent: in a private mount namespace, an empty tmpfs
# over the folder the CUDA runtime and cuBLAS load from, then `hearth-cli info` must say why
# CUDA is unavailable (the loader's dlerror text) and `generate` must run on the CPU.
# Usage: test_cuda_fallback.sh HEARTH_CLI. Exit 77 (skipped) where the plugin is not built or
# unshare/mount are not permitted.
set -euo pipefail
cli=$1
plugin="$(dirname "$cli")/../lib/hearth/libhearth_cuda.so"
if [[ ! -f $plugin ]]; then echo "SKIP: no CUDA plugin in this build ($plugin)"; exit 77; fi
if ! unshare -m true 2>/dev/null; then echo "SKIP: unshare -m is not permitted here"; exit 77; fi
cudart=$(ldd "$plugin" | awk '/libcudart\.so/ {print $3}')
cublas=$(ldd "$plugin" | awk '/libcublas\.so/ {print $3}')
if [[ -z $cudart || -z $cublas ]]; then echo "FAIL: the plugin's CUDA libraries are not found even before hiding them"; exit 1; fi
dirs=$(printf '%s\n' "$(dirname "$(readlink -f "$cudart")")" "$(dirname "$(readlink -f "$cublas")")" | sort -u)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cli" synth --shape tiny --type Q4_0 --out "$work/tiny.gguf" >/dev/null 2>&1
# The case under test is a machine with the NVIDIA driver but without the CUDA runtime or
# cuBLAS. Without a driver the loader does not even try the plugin (test_backends
# noDriverLoadsNoPlugin), so where there is none an empty libcuda.so.1 stands in for it.
driver=""
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  mkdir -p "$work/driver"
  if ! echo 'int hearth_no_driver_here;' | cc -shared -fPIC -x c - -o "$work/driver/libcuda.so.1" 2>/dev/null; then
    echo "SKIP: no C compiler to make a stand-in libcuda.so.1"; exit 77
  fi
  driver=$work/driver
fi

# Inside the namespace: hide every folder, prove the libraries are gone, run the two commands.
inner='set -euo pipefail
for d in $HIDE; do mount -t tmpfs -o size=1m hearth-hidden "$d"; done
if ldd "$PLUGIN" | grep -E "libcudart|libcublas" | grep -vq "not found"; then echo "FAIL: CUDA libraries still visible"; exit 1; fi
"$CLI" info --model "$WORK/tiny.gguf" > "$WORK/info.txt" 2>&1
"$CLI" generate --model "$WORK/tiny.gguf" --prompt hello --raw --max-tokens 4 --temp 0 --json > "$WORK/gen.json" 2>&1'
libs=${LD_LIBRARY_PATH:-}
if [[ -n $driver ]]; then libs=$driver${libs:+:$libs}; fi
HIDE=$dirs PLUGIN=$plugin CLI=$cli WORK=$work LD_LIBRARY_PATH=$libs unshare -m bash -c "$inner"

cat "$work/info.txt"
line=$(grep -E '^ +CUDA:' "$work/info.txt" || true)
if [[ $line != *"unavailable (cannot load the CUDA plugin: lib"*"cannot open shared object file"* ]]; then
  echo "FAIL: hearth-cli info does not say that the CUDA libraries are missing: '$line'"; exit 1
fi
if ! grep -qE '^ +backend: CPU' "$work/info.txt"; then
  echo "FAIL: the model is not loaded on a CPU backend"; exit 1
fi
if ! grep -q '"finish_reason":"length"' "$work/gen.json" || ! grep -q '"tokens":\[[0-9]' "$work/gen.json"; then
  echo "FAIL: generate did not produce its 4 tokens:"; cat "$work/gen.json"; exit 1
fi
echo "generate ran on the CPU:"; head -c 600 "$work/gen.json"; echo
echo "PASS"
