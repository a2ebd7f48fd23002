#!/usr/bin/env bash
# llama.cpp, built once natively from the sources vendored in the oracle's source archive
# (setup-oracle.sh downloads and checks it): its own benchmark and server, `llama-bench` and
# `llama-server`, for the benchmarks that compare Hearth with llama.cpp on the same host
# (`hearth-cli bench --depth N --compare-oracle`, tests/server/bench_serve.py) and the test
# command's test_remote (the window's remote mode against llama-server); and the shared
# libraries (libllama, libggml*) that the oracle's llama-cpp-python loads (setup-oracle.sh copies
# them into its environment): one compilation of llama.cpp for both, where there were two.
#
# Built once per llama-cpp-python version and host instruction-set list into
# $HEARTH_CACHE/llama-tools/<version>-<hash of the list>/{bin,lib} and reused after that (a re-run
# only prints the bin folder). Release, shared libraries (the programs find them through
# $ORIGIN/../lib), no CURL/OpenSSL, no web UI download, and the oracle's rule for instruction
# sets: everything this host can run (host_isa.c: CPUID and XCR0), AMX never — -march=native
# would build AMX code, which dies on VM hosts that list AMX but do not give a process its state
# (the "Test hosts" issue).
#
#   packaging/scripts/build-llama-tools.sh           build if needed; print the bin folder
#   packaging/scripts/build-llama-tools.sh --print   print the bin folder if built (exit 1 if not)
#   packaging/scripts/build-llama-tools.sh --rebuild build again from scratch
#
# HEARTH_LLAMA_TOOLS_JOBS sets the build's parallel jobs (default: nproc).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=0.3.36  # setup-oracle.sh's version; llama.cpp 0c1e57098
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist="$HEARTH_CACHE/oracle-sdist/llama_cpp_python-$version.tar.gz"
# The whole script is one function, read before it runs: editing this file (a git checkout)
# during a build does not change the running build.
main() {
  mode="${1:-build}"
  case "$mode" in
    build | --print | --rebuild) ;;
    *) hearth_die "usage: $0 [--print | --rebuild]" ;;
  esac

  isa="$(hearth_host_isa)"
  cmake_isa="$(hearth_host_isa --cmake)"
  key="$(printf '%s\n%s\nshared\n' "$version" "$cmake_isa" | sha256sum | cut -c1-12)"
  root="$HEARTH_CACHE/llama-tools/$version-$key"
  bin="$root/bin"
  lib="$root/lib"
  stamp="$root/.complete"

  if [ "$mode" = "--print" ]; then
    [ -f "$stamp" ] || { hearth_log "llama.cpp tools are not built for this host; run $0"; exit 1; }
    echo "$bin"; exit 0
  fi
  if [ "$mode" = "build" ] && [ -f "$stamp" ] && [ -x "$bin/llama-bench" ] && [ -x "$bin/llama-server" ] &&
    [ -f "$lib/libllama.so" ]; then
    hearth_log "llama.cpp tools ready for [$isa]"
    echo "$bin"; exit 0
  fi

  # One build at a time (two benchmarks started together share it).
  mkdir -p "$HEARTH_CACHE/llama-tools"
  exec 9>"$HEARTH_CACHE/llama-tools/.lock"
  flock 9
  if [ "$mode" = "build" ] && [ -f "$stamp" ]; then
    hearth_log "llama.cpp tools ready for [$isa]"
    echo "$bin"; exit 0
  fi

  # The archive setup-oracle.sh keeps, fetched the same way when it is not there yet.
  hearth_fetch_llama_sdist "$sdist" "$sdist_sha256" "$version"

  rm -rf "$root"
  mkdir -p "$root/src" "$bin" "$lib"
  start="$(hearth_now)"
  hearth_log "building llama.cpp's libraries, llama-bench and llama-server (llama-cpp-python $version's llama.cpp) for [$isa]"
  tar -xzf "$sdist" -C "$root/src" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"
  # shellcheck disable=SC2086
  cmake -S "$root/src" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release $cmake_isa \
    -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN:$ORIGIN/../lib' \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_OPENMP=ON >"$root/configure.log" 2>&1 ||
    { tail -n 30 "$root/configure.log" >&2; hearth_die "configuring llama.cpp failed (log: $root/configure.log)"; }
  cmake --build "$root/build" -j "${HEARTH_LLAMA_TOOLS_JOBS:-$(nproc)}" --target llama llama-bench llama-server \
    >"$root/build.log" 2>&1 ||
    { tail -n 30 "$root/build.log" >&2; hearth_die "building llama.cpp's tools failed (log: $root/build.log)"; }
  cp "$root/build/bin/llama-bench" "$root/build/bin/llama-server" "$bin/"
  # The libraries with their version links (libllama.so -> .so.0 -> .so.0.5.0), wherever the
  # build put them.
  find "$root/build" -name 'lib*.so*' \( -type f -o -type l \) -exec cp -a {} "$lib/" \;
  [ -f "$lib/libllama.so" ] && [ -f "$lib/libggml.so" ] || hearth_die "llama.cpp's shared libraries were not built"
  "$bin/llama-bench" --help >/dev/null 2>&1 || hearth_die "the built llama-bench does not run"
  seconds=$(($(hearth_now) - start))
  printf 'llama-cpp-python %s (llama.cpp 0c1e57098)\nisa: %s\ncmake: %s\nbuild seconds: %s\n' \
    "$version" "$isa" "$cmake_isa" "$seconds" >"$root/build-info.txt"
  # The sources and objects are not needed any more (about 1 GB).
  rm -rf "$root/src" "$root/build"
  touch "$stamp"
  hearth_log "llama.cpp tools built in ${seconds} s: $bin"
  echo "$bin"
}
main "$@"
exit
