#!/usr/bin/env bash
# Installs the Debian 12 packages Hearth needs to build, test and run — only those missing.
# Usage: install-deps.sh [run|package|test]   (package adds what package.sh needs, test what
# only the test suite needs)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mode="${1:-test}"
packages=(
  g++ cmake ninja-build pkg-config ccache git
  qt6-base-dev qt6-l10n-tools qt6-tools-dev libqt6sql6-sqlite qt6-qpa-plugins
  libsentencepiece-dev libsqlite3-dev libxxhash-dev libcpp-httplib-dev
  qtkeychain-qt6-dev  # remote endpoints' API keys in the system keychain (app/remote/api_key_store.cpp)
  python3 python3-venv python3-pip
  # pdftotext: the text of PDFs attached to a chat (app/docs/document_reader.cpp), run as a
  # child process so that a malformed PDF cannot take the window down.
  poppler-utils
  # Qt's own words in the window's language (OK/Cancel, the file dialog): ui/interface_language.cpp
  qt6-translations-l10n
  # The icon theme (ui/appearance.cpp: Breeze, light and dark) and Qt's SVG icon engine that
  # draws it (a plugin in libqt6svg6, invisible to shlibdeps).
  breeze-icon-theme libqt6svg6
)
# Packaging (package.sh): icon rendering, dpkg-shlibdeps, rpmbuild.
if [ "$mode" = test ] || [ "$mode" = package ]; then
  # libmagickcore-6.q16-6-extra holds the SVG reader; apt would skip it (a recommend).
  packages+=(imagemagick libmagickcore-6.q16-6-extra dpkg-dev file rpm)
fi
if [ "$mode" = test ]; then
  # The packaging test (test-stages.d/50-package.sh) and the Windows cross build (40-mingw.sh).
  packages+=(mmdebstrap x11-utils desktop-file-utils appstream qemu-user g++-mingw-w64-x86-64 nsis)
  packages+=(xvfb xauth clang-19 libclang-rt-19-dev)
  # A real keychain for tests/server/test_remote (with_keyring.sh): GNOME Keyring's Secret
  # Service in a private session bus (dbus-run-session is in dbus-daemon).
  packages+=(gnome-keyring dbus-daemon)
  # Glyphs for the zh_CN screenshots and GUI tests (the package recommends it: cpack_linux.cmake).
  packages+=(fonts-wqy-microhei)
  # The Windows build of hearth-cli and its installer run under Wine (test-stages.d/45-wine.sh):
  # the 64-bit loader alone (Hearth is 64-bit; wine32 would need the i386 architecture).
  packages+=(wine64)
fi
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  hearth_log "all ${#packages[@]} packages are installed"; exit 0
fi
hearth_log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
hearth_sudo apt-get update -qq
hearth_sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
