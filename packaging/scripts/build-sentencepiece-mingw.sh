#!/usr/bin/env bash
# Builds SentencePiece for 64-bit Windows (mingw-w64) as a static library, for the hearth-cli.exe
# of the cross build (test-stages.d/40-mingw.sh): Debian's own source package of the version
# libsentencepiece-dev holds, with Debian's patches, so that Windows tokenizes with the same code
# as Linux. Fetched through apt with a source list of its own, derived from the host's (the host's
# apt configuration is left as it is); built once and cached in
# $HEARTH_CACHE/mingw/sentencepiece-VERSION (lib/libsentencepiece.a, include/). Prints that folder.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=$(dpkg-query -W -f='${source:Version}' libsentencepiece-dev 2>/dev/null) ||
  hearth_die "libsentencepiece-dev is not installed (install-deps.sh)"
compiler=$(x86_64-w64-mingw32-g++-posix -dumpfullversion)
prefix="$HEARTH_CACHE/mingw/sentencepiece-$version-gcc$compiler"
if [ -f "$prefix/lib/libsentencepiece.a" ] && [ -f "$prefix/include/sentencepiece_processor.h" ]; then
  echo "$prefix"
  exit 0
fi
command -v dpkg-source >/dev/null || hearth_die "dpkg-source is missing (install-deps.sh test installs dpkg-dev)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# deb-src entries for the suites the host installs from (one-line and deb822 sources alike).
mkdir -p "$work/parts" "$work/lists/partial" "$work/archives/partial"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f"
done >"$work/parts/src.list"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && sed 's/^Types:.*$/Types: deb-src/' "$f" >"$work/parts/$(basename "$f")"
done
apt_opts=(-o "Dir::Etc::sourcelist=$work/parts/src.list" -o "Dir::Etc::sourceparts=$work/parts"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives" -o APT::Sandbox::User=root)
hearth_log "fetching the SentencePiece source package $version"
apt-get "${apt_opts[@]}" update -qq >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; hearth_die "apt-get update (deb-src) failed"; }
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq "sentencepiece=$version" >"$work/source.log" 2>&1) ||
  { cat "$work/source.log" >&2; hearth_die "apt-get source sentencepiece=$version failed"; }
(cd "$work" && dpkg-source -x --no-check ./sentencepiece_*.dsc src >/dev/null)
# Debian builds only the shared library; its patch that removes the static one is undone.
(cd "$work/src" && patch -R -s -p1 <debian/patches/disable-static-library.patch)
hearth_log "building SentencePiece $version for x86_64-w64-mingw32"
export CCACHE_DIR="${CCACHE_DIR:-$HEARTH_CACHE/ccache}" CCACHE_BASEDIR="$work" CCACHE_NOHASHDIR=1
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$HEARTH_ROOT/cmake/mingw-w64.cmake" -DSPM_ENABLE_SHARED=OFF -DSPM_ENABLE_TCMALLOC=OFF \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; hearth_die "configuring SentencePiece failed"; }
cmake --build "$work/build" --parallel "$(nproc)" --target sentencepiece-static >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log" >&2; hearth_die "building SentencePiece failed"; }
rm -rf "$prefix.tmp" && mkdir -p "$prefix.tmp/lib" "$prefix.tmp/include"
cp "$work/build/src/libsentencepiece.a" "$prefix.tmp/lib/"
cp "$work/src/src/sentencepiece_processor.h" "$prefix.tmp/include/"
rm -rf "$prefix" && mv "$prefix.tmp" "$prefix"
echo "$prefix"
