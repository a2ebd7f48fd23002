#!/usr/bin/env bash
# stage: mingw-w64 (kernels, engine, NSIS)
# Cross-compiles the Qt-free layers (hearth_kernels, hearth_engine) for 64-bit Windows with
# mingw-w64, so that no POSIX-only call creeps into code the Windows build compiles; then
# checks the NSIS installer configuration on stub executables (see below).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
command -v x86_64-w64-mingw32-g++-posix >/dev/null ||
  hearth_die "x86_64-w64-mingw32-g++-posix is missing (install-deps.sh test installs g++-mingw-w64-x86-64)"
build="${HEARTH_MINGW_BUILD:-$HEARTH_ROOT/build-mingw}"
export CCACHE_DIR="${CCACHE_DIR:-$HEARTH_CACHE/ccache}"
# The third-party headers the engine includes (SentencePiece's is portable C++, xxHash's
# portable C), copied to a folder of their own: the host's /usr/include (glibc's headers)
# stays out of the Windows build. Static libraries link nothing.
headers="$build/third-party-include"
rm -rf "$headers" && mkdir -p "$headers"
for h in sentencepiece_processor.h xxhash.h; do
  if [ -e "/usr/include/$h" ]; then cp "/usr/include/$h" "$headers/"; fi
done
cmake -S "$HEARTH_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$HEARTH_ROOT/cmake/mingw-w64.cmake" -DHEARTH_ENGINE_ONLY=ON \
  -DHEARTH_THIRD_PARTY_INCLUDE_DIR="$headers" >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target hearth_kernels hearth_engine
for lib in libhearth_kernels.a libhearth_engine.a; do
  path=$(find "$build" -name "$lib" -print -quit)
  [ -n "$path" ] || hearth_die "$lib was not built"
  # Every object must be a PE/COFF x86-64 object (objdump names the format).
  formats=$(x86_64-w64-mingw32-objdump -a "$path" | sed -n 's/.*file format //p' | sort -u)
  [ "$formats" = pe-x86-64 ] || hearth_die "$lib holds objects of format(s): $formats"
  hearth_log "$lib: $(du -h "$path" | cut -f1), pe-x86-64"
done

# The NSIS installer configuration (packaging/windows/cpack_nsis.cmake) around two stub
# executables: the installer script must generate and compile, with a folder choice, a
# Start-menu shortcut and an uninstaller. (Hearth itself needs Qt for Windows: not here.)
nsis="$build/nsis-check"
rm -rf "$nsis"
cmake -S "$HEARTH_ROOT/packaging/windows/nsis-check" -B "$nsis" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$HEARTH_ROOT/cmake/mingw-w64.cmake" >/dev/null 2>&1 ||
  hearth_die "configuring packaging/windows/nsis-check failed"
cmake --build "$nsis" >/dev/null
(cd "$nsis" && cpack -G NSIS >"$nsis/cpack.log" 2>&1) || { cat "$nsis/cpack.log" >&2; hearth_die "cpack -G NSIS failed"; }
script="$nsis/_CPack_Packages/win64/NSIS/project.nsi"
for want in 'MUI_PAGE_DIRECTORY' 'CreateShortCut "$SMPROGRAMS\$STARTMENU_FOLDER\Hearth.lnk"' 'WriteUninstaller'; do
  grep -q -F "$want" "$script" || hearth_die "the NSIS script lacks $want"
done
installer=$(ls "$nsis"/packages/*.exe)
hearth_log "NSIS installer (stub executables): $(basename "$installer"), $(du -k "$installer" | cut -f1) KiB, with folder choice, Start-menu shortcut, uninstaller"
