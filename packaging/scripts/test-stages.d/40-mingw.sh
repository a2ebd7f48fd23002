#!/usr/bin/env bash
# stage: mingw-w64 (engine, hearth-cli.exe, NSIS)
# Cross-compiles the Qt-free layers (hearth_kernels, hearth_engine) and the Qt-free hearth-cli
# (app/cli_core: generate, tokenize, info) for 64-bit Windows with mingw-w64, so that no
# POSIX-only call creeps into code the Windows build compiles; packages hearth-cli.exe in an
# x86-64 NSIS installer (45-wine.sh runs both under Wine); and checks the full installer's
# configuration (the window's, which needs Qt for Windows) on stub executables.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
command -v x86_64-w64-mingw32-g++-posix >/dev/null ||
  hearth_die "x86_64-w64-mingw32-g++-posix is missing (install-deps.sh test installs g++-mingw-w64-x86-64)"
build="${HEARTH_MINGW_BUILD:-$HEARTH_ROOT/build-mingw}"
export CCACHE_DIR="${CCACHE_DIR:-$HEARTH_CACHE/ccache}"
# SentencePiece for Windows (Debian's source, built once and cached): hearth-cli.exe links it.
spm=$(bash "$HEARTH_ROOT/packaging/scripts/build-sentencepiece-mingw.sh")
# The third-party headers the engine includes (SentencePiece's is portable C++, xxHash's
# portable C), copied to a folder of their own: the host's /usr/include (glibc's headers)
# stays out of the Windows build.
headers="$build/third-party-include"
rm -rf "$headers" && mkdir -p "$headers"
cp "$spm/include/sentencepiece_processor.h" /usr/include/xxhash.h "$headers/"
cmake -S "$HEARTH_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$HEARTH_ROOT/cmake/mingw-w64.cmake" -DHEARTH_ENGINE_ONLY=ON \
  -DHEARTH_THIRD_PARTY_INCLUDE_DIR="$headers" -DHEARTH_SENTENCEPIECE_LIBRARY="$spm/lib/libsentencepiece.a" >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target hearth_kernels hearth_engine hearth-cli
for lib in libhearth_kernels.a libhearth_engine.a; do
  path=$(find "$build" -name "$lib" -print -quit)
  [ -n "$path" ] || hearth_die "$lib was not built"
  # Every object must be a PE/COFF x86-64 object (objdump names the format).
  formats=$(x86_64-w64-mingw32-objdump -a "$path" | sed -n 's/.*file format //p' | sort -u)
  [ "$formats" = pe-x86-64 ] || hearth_die "$lib holds objects of format(s): $formats"
  hearth_log "$lib: $(du -h "$path" | cut -f1), pe-x86-64"
done
# The AVX kernels must hold no aligned vector move (vmovaps, vmovapd, vmovdqa*): mingw-w64's GCC
# would use them for YMM/ZMM spills to a stack that Windows aligns to 16 bytes only (GCC bug
# 54412); kernels/CMakeLists.txt has the assembler write the unaligned forms.
kernels=$(find "$build" -name libhearth_kernels.a -print -quit)
aligned=$(x86_64-w64-mingw32-objdump -d "$kernels" | grep -cE 'vmov(ap[sd]|dqa)' || true)
[ "$aligned" = 0 ] || hearth_die "libhearth_kernels.a holds $aligned aligned vector moves (GCC bug 54412)"
spills=$(x86_64-w64-mingw32-objdump -d "$kernels" | grep -cE 'vmov(up[sd]|dqu).*%[yz]mm.*\(%r[sb]p\)|vmov(up[sd]|dqu).*\(%r[sb]p\).*%[yz]mm' || true)
hearth_log "libhearth_kernels.a: no aligned vector move; $spills YMM/ZMM moves to or from the stack, all unaligned"
exe="$build/app/cli_core/hearth-cli.exe"
[ -f "$exe" ] || hearth_die "hearth-cli.exe was not built"
format=$(x86_64-w64-mingw32-objdump -f "$exe" | sed -n 's/.*file format //p')
[ "$format" = pei-x86-64 ] || hearth_die "hearth-cli.exe is $format, not pei-x86-64"
# Linked statically: it loads only Windows' own DLLs.
dlls=$(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/.*DLL Name: //p' | tr 'A-Z' 'a-z' | sort -u | tr '\n' ' ')
for dll in $dlls; do
  case "$dll" in kernel32.dll | msvcrt.dll | shell32.dll | advapi32.dll | user32.dll | ws2_32.dll) ;;
    *) hearth_die "hearth-cli.exe loads $dll, which Windows does not ship" ;;
  esac
done
hearth_log "hearth-cli.exe: $(du -h "$exe" | cut -f1), pei-x86-64, loads only: $dlls"

# hearth-cli.exe's installer (packaging/windows/cpack_nsis.cmake, the CLI-only branch), for x86-64.
(cd "$build" && rm -rf packages _CPack_Packages && cpack -G NSIS >"$build/cpack.log" 2>&1) ||
  { cat "$build/cpack.log" >&2; hearth_die "cpack -G NSIS (hearth-cli.exe) failed"; }
installer=$(ls "$build"/packages/*.exe)
arch=$(x86_64-w64-mingw32-objdump -f "$installer" | sed -n 's/.*file format //p')
[ "$arch" = pei-x86-64 ] || hearth_die "the installer is $arch, not an x86-64 (amd64-unicode) installer"
hearth_log "NSIS installer of hearth-cli.exe: $(basename "$installer"), $(du -k "$installer" | cut -f1) KiB, $arch"

# The full NSIS installer configuration (the window and hearth-cli with Qt's DLLs) around two
# stub executables: the installer script must generate and compile, with a folder choice, a
# Start-menu shortcut and an uninstaller. (Hearth's window needs Qt for Windows: not here.)
nsis="$build/nsis-check"
rm -rf "$nsis"
cmake -S "$HEARTH_ROOT/packaging/windows/nsis-check" -B "$nsis" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$HEARTH_ROOT/cmake/mingw-w64.cmake" >/dev/null 2>&1 ||
  hearth_die "configuring packaging/windows/nsis-check failed"
cmake --build "$nsis" >/dev/null
(cd "$nsis" && cpack -G NSIS >"$nsis/cpack.log" 2>&1) || { cat "$nsis/cpack.log" >&2; hearth_die "cpack -G NSIS failed"; }
script="$nsis/_CPack_Packages/win64/NSIS/project.nsi"
for want in 'MUI_PAGE_DIRECTORY' 'CreateShortCut "$SMPROGRAMS\$STARTMENU_FOLDER\Hearth.lnk"' 'WriteUninstaller' 'Target amd64-unicode'; do
  grep -q -F "$want" "$script" || hearth_die "the NSIS script lacks $want"
done
installer=$(ls "$nsis"/packages/*.exe)
hearth_log "NSIS installer (stub executables): $(basename "$installer"), $(du -k "$installer" | cut -f1) KiB, with folder choice, Start-menu shortcut, uninstaller"
