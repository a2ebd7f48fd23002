#!/usr/bin/env bash
# The README's third command (before `apt install`): installs what is missing, builds the
# packaged targets of the release tree (build/), fetches the default model into the user's
# cache (the installed app finds it there), and writes build/packages/hearth_<v>-1_amd64.deb
# (and the .rpm when rpmbuild exists) with CPack.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$HEARTH_ROOT/packaging/scripts/install-deps.sh" package
cd "$HEARTH_ROOT"
# Packages carry the CUDA plugin for every GPU generation (sm_75 to sm_90, PTX for newer
# ones); CI builds one architecture plus PTX to save time (issue 11), as the preset does.
archs="75;80;86;89;90"
if [ "${CI:-}" = "true" ]; then archs="75"; fi
cmake --preset release -DHEARTH_CUDA_ARCHS="$archs" >/dev/null
cmake --build --preset release --parallel "$(nproc)" --target hearth hearth-cli hearth_icons
bash "$HEARTH_ROOT/packaging/scripts/fetch-models.sh" default
generators="DEB"
command -v rpmbuild >/dev/null && generators="DEB;RPM"
rm -rf "$HEARTH_BUILD/packages"
(cd "$HEARTH_BUILD" && cpack -G "$generators" >/dev/null)
for f in "$HEARTH_BUILD"/packages/*.deb "$HEARTH_BUILD"/packages/*.rpm; do
  if [ -e "$f" ]; then hearth_log "$(du -k "$f" | cut -f1) KiB  ${f#"$HEARTH_ROOT"/}"; fi
done
