#!/usr/bin/env bash
# stage: package (.deb in a clean Debian 12 root, .rpm)
# needs: build (release)
# Builds the .deb and .rpm from the release tree (package.sh), checks them without installing
# (check-packages.sh), then installs the .deb into a copy of a cached clean Debian 12 root, runs
# it and purges it (pkgroot-test.sh). Needs root (chroot, mounts) and the Debian mirror.
# Results (file lists, logs, the window's screenshot): build/packages/test/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scripts="$HEARTH_ROOT/packaging/scripts"
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=HOME,XDG_CACHE_HOME,CI,HEARTH_MODELS_DIR bash "${BASH_SOURCE[0]}"
fi
source "$scripts/pkgroot.sh"
bash "$scripts/package.sh"
deb=$(ls "$HEARTH_BUILD"/packages/hearth_*_amd64.deb)
rpm=$(ls "$HEARTH_BUILD"/packages/hearth-[0-9]*.x86_64.rpm 2>/dev/null || true)  # not hearth-cuda-*
bash "$scripts/check-packages.sh" "$HEARTH_BUILD" "$deb" "$rpm"
base=$(pkgroot_base_tar)
out="$HEARTH_BUILD/packages/test"
rm -rf "$out" && mkdir -p "$out"
unshare --mount --propagation private bash "$scripts/pkgroot-test.sh" "$base" "$deb" "$out"
hearth_log "installed files of $(basename "$deb"):"
sed 's/^/    /' "$out/installed-files.txt" >&2
