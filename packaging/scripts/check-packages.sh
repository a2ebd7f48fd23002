#!/usr/bin/env bash
# Checks the built packages without installing them: the desktop file and AppStream metainfo
# validate; the .deb's metadata (name, version, licence file, Depends from shlibdeps plus the
# Qt plugins the binaries need) and file list; the .rpm's metadata (rpm -qip) and that its
# file list (rpm -qlp) is the .deb's; the icons' sizes; and that the executables run on any
# x86-64 CPU (check_baseline_isa.py, and hearth-cli under qemu's baseline CPU model).
# Usage: check-packages.sh BUILD_DIR DEB [RPM]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build="$1" deb="$2" rpm="${3:-}"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

desktop-file-validate "$HEARTH_ROOT/resources/hearth.desktop"
appstreamcli validate --no-net --explain "$build/resources/io.github.hearth.Hearth.metainfo.xml" >/dev/null ||
  hearth_die "appstreamcli validate failed on the metainfo file"
hearth_log "hearth.desktop and the AppStream metainfo validate"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = hearth ] || hearth_die "deb Package is '$(field Package)'"
[ "$(field Version)" = "$version-1" ] || hearth_die "deb Version '$(field Version)' is not $version-1"
[ "$(field Architecture)" = amd64 ] || hearth_die "deb Architecture is '$(field Architecture)'"
[ -n "$(field Maintainer)" ] && [ -n "$(field Description)" ] || hearth_die "deb lacks Maintainer or Description"
depends=$(field Depends)
hearth_log "Depends: $depends"
dpkg-deb -x "$deb" "$work/deb"
needs() {  # needs SONAME-PATTERN PACKAGE: the package must be in Depends when a binary links it
  if readelf -d "$work/deb/usr/bin/hearth" "$work/deb/usr/bin/hearth-cli" | grep -q "Shared library: \[$1"; then
    grep -q -E "(^|, )$2( |,|$)" <<<"$depends" || hearth_die "the binaries link $1 but Depends lacks $2"
  fi
}
needs libc.so.6 libc6
needs libQt6Core.so.6 libqt6core6
needs libQt6Gui.so.6 qt6-qpa-plugins
needs libQt6Widgets.so.6 qt6-translations-l10n
needs libQt6Sql.so.6 libqt6sql6-sqlite
needs libQt6Widgets.so.6 breeze-icon-theme
needs libQt6Widgets.so.6 libqt6svg6
needs libsqlite3.so.0 libsqlite3-0
needs libsentencepiece.so.0 libsentencepiece0
needs libqt6keychain.so.1 libqt6keychain1
[ -s "$work/deb/usr/share/doc/hearth/copyright" ] || hearth_die "the deb has no usr/share/doc/hearth/copyright"

# Files (not folders) of each package, as absolute paths.
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort >"$work/deb-files.txt"
for f in /usr/bin/hearth /usr/bin/hearth-cli /usr/share/applications/hearth.desktop \
         /usr/share/metainfo/io.github.hearth.Hearth.metainfo.xml \
         /usr/share/icons/hicolor/scalable/apps/hearth.svg; do
  grep -qx "$f" "$work/deb-files.txt" || hearth_die "the deb lacks $f"
done
for png in "$work"/deb/usr/share/icons/hicolor/*x*/apps/hearth.png; do
  want=$(basename "$(dirname "$(dirname "$png")")")
  got=$(/usr/bin/identify -format '%wx%h' "$png")
  [ "$got" = "$want" ] || hearth_die "icon $png is $got"
done
n_png=$(ls "$work"/deb/usr/share/icons/hicolor/*x*/apps/hearth.png | wc -l)
[ "$n_png" -ge 5 ] || hearth_die "the deb has only $n_png PNG icons"
hearth_log "deb: $(wc -l <"$work/deb-files.txt") files, $n_png PNG icon sizes plus the SVG"

if [ -n "$rpm" ]; then
  rpm -qip "$rpm" 2>/dev/null >"$work/rpm-info.txt"
  for want in "Name *: hearth" "Version *: $version" "License *: MIT"; do
    grep -q -E "^$want\$" "$work/rpm-info.txt" || hearth_die "rpm -qip lacks '$want': $(cat "$work/rpm-info.txt")"
  done
  rpm -qlp "$rpm" 2>/dev/null | sort >"$work/rpm-all.txt"
  # rpm -qlp lists folders the package owns too: keep the paths that are files in the .deb's tree.
  while read -r p; do [ -d "$work/deb$p" ] || echo "$p"; done <"$work/rpm-all.txt" >"$work/rpm-files.txt"
  diff "$work/deb-files.txt" "$work/rpm-files.txt" >&2 || hearth_die "the rpm's file list differs from the deb's (above)"
  owned_dirs=$(grep -c -v -x -F -f "$work/rpm-files.txt" "$work/rpm-all.txt" || true)
  hearth_log "rpm: $(sed -n 's/^Name *: //p' "$work/rpm-info.txt") $(sed -n 's/^Version *: //p' "$work/rpm-info.txt"), the deb's $(wc -l <"$work/rpm-files.txt") files, $owned_dirs own folders"
fi

# And at run time: the packaged hearth-cli on an emulated baseline x86-64 CPU (qemu64: no SSE3
# and up, no AVX) must start and fall back to the reference kernels.
if command -v qemu-x86_64 >/dev/null; then
  info=$(qemu-x86_64 -cpu qemu64 "$work/deb/usr/bin/hearth-cli" info) || hearth_die "hearth-cli fails on a baseline x86-64 CPU (qemu64)"
  grep -q 'AVX2.*unavailable' <<<"$info" && grep -q 'reference): available' <<<"$info" ||
    hearth_die "on a baseline x86-64 CPU (qemu64), hearth-cli info says: $info"
  hearth_log "on a baseline x86-64 CPU (qemu64) hearth-cli runs, AVX2 unavailable, reference kernels available"
fi
bins=("$build/app/hearth-cli")
[ -x "$build/app/hearth" ] && bins+=("$build/app/hearth")
python3 "$HEARTH_ROOT/packaging/scripts/check_baseline_isa.py" "$build" "${bins[@]}"
