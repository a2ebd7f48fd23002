#!/usr/bin/env bash
# The conformance oracle: llama-cpp-python in its own Python environment in the cache folder. Its
# Python package is built from the source archive without llama.cpp (LLAMA_BUILD=OFF, seconds),
# and the llama.cpp libraries it loads are the ones build-llama-tools.sh builds for llama-bench
# and llama-server from the same vendored sources and flags, copied into the package's lib folder:
# llama.cpp is compiled once per instruction-set list (4-5 minutes on 2 cores), not twice. A test
# dependency only: nothing in Hearth links or loads llama.cpp.
# Version 0.3.36 vendors llama.cpp at ggml-org/llama.cpp@0c1e57098 (its CHANGELOG).
#
# Built with GGML_NATIVE=OFF and the instruction sets this host can really run (host_isa.c:
# CPUID and XCR0; AVX2, FMA, F16C, AVX-VNNI, AVX-512 and its VNNI/BF16/VBMI extensions where the
# OS enables them; AMX never). -march=native builds AMX code on CPUs that list AMX, which dies
# with a general-protection fault or SIGILL in libggml-cpu.so on VM hosts that do not give a
# process AMX state (seen on this project's machine kind even with XCR0's tile bits set). The list is written to $venv/hearth-oracle-build.txt; oracle.py puts
# it in its answer cache's key and its crash messages.
#
# The source archive is downloaded once (checked by SHA-256) into $HEARTH_CACHE/oracle-sdist;
# its llama.cpp vocab-only files with their test cases (vendor/llama.cpp/models/ggml-vocab-*:
# .gguf, .gguf.inp, .gguf.out) are extracted into $HEARTH_CACHE/llama-vocab/<version> for the
# tokenizer tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=0.3.36
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist="$HEARTH_CACHE/oracle-sdist/llama_cpp_python-$version.tar.gz"
vocab="$HEARTH_CACHE/llama-vocab/$version"
venv="$HEARTH_CACHE/oracle-venv"
isa="$(hearth_host_isa)"
cmake_isa="$(hearth_host_isa --cmake)"
wheels="$HEARTH_CACHE/oracle-wheels/$version-python-only"
tools_bin="$(bash "$(dirname "${BASH_SOURCE[0]}")/build-llama-tools.sh" | tail -n1)"
libs="$(dirname "$tools_bin")/lib"
[ -f "$libs/libllama.so" ] || hearth_die "build-llama-tools.sh left no libllama.so in $libs"
want="llama-cpp-python==$version jinja2==3.1.6 numpy==2.4.6 isa=[$isa] libs=$libs"
stamp="$venv/.hearth-oracle"
hearth_log "oracle build flags: $cmake_isa"
hearth_fetch_llama_sdist "$sdist" "$sdist_sha256" "$version"
if [ ! -f "$vocab/.complete" ]; then
  rm -rf "$vocab" && mkdir -p "$vocab"
  tar -xzf "$sdist" -C "$vocab" --strip-components=4 --wildcards \
    "llama_cpp_python-$version/vendor/llama.cpp/models/ggml-vocab-*"
  touch "$vocab/.complete"
  hearth_log "llama.cpp vocab files: $(ls "$vocab"/*.gguf | wc -l) in $vocab"
fi
if [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  hearth_log "oracle ready: llama-cpp-python $version in $venv"; exit 0
fi
mkdir -p "$wheels"
if ! ls "$wheels"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
  hearth_ensure_venv
  hearth_log "building llama-cpp-python $version's Python package (without llama.cpp)"
  CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$HEARTH_VENV/bin/python3" -m pip wheel --quiet \
    --disable-pip-version-check --no-deps --no-cache-dir -w "$wheels" "$sdist"
fi
rm -rf "$venv"
python3 -m venv "$venv"
# The wheel in $wheels is preferred to PyPI's source archive of the same version.
# shellcheck disable=SC2086
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --find-links "$wheels" ${want% isa=*}
pkg="$("$venv/bin/python3" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("llama_cpp").origin))')"
mkdir -p "$pkg/lib"
cp -a "$libs"/lib*.so* "$pkg/lib/"
"$venv/bin/python3" -c 'import llama_cpp' || hearth_die "the oracle's llama_cpp does not import"
printf 'llama-cpp-python %s\nisa: %s\ncmake: %s\nllama.cpp: shared libraries of build-llama-tools.sh\n' \
  "$version" "$isa" "$cmake_isa" > "$venv/hearth-oracle-build.txt"
echo "$want" > "$stamp"
hearth_log "oracle installed: llama-cpp-python $version for [$isa]"
