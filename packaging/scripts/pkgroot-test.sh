#!/usr/bin/env bash
# Installs a .deb with apt into a copy of a clean Debian 12 root, runs hearth-cli (--version,
# info, a short generate with the default model) and the hearth window (pkgroot-window.sh) from
# the installed files as an unprivileged user of that root, purges the package and checks that
# nothing but the user's data is left. Run as root inside `unshare --mount` (the mounts die with
# it). Usage: pkgroot-test.sh BASE.tar PACKAGE.deb OUT_DIR
#
# Two cached layers, outside the repository: BASE.tar (mmdebstrap, pkgroot.sh) and, keyed by
# it and the .deb's Depends, that root after apt installed the .deb (its dependencies from the
# Debian mirror) and purged it again — the dependencies stay, marked automatic. A cold run
# builds that layer; every run then installs the .deb with apt (the dependencies must be
# satisfied), tests, purges it, and compares the file lists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
base="$1" deb="$2" out="$3"
model_name=SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$HEARTH_MODELS/$model_name" ] || hearth_die "the default model is missing: $HEARTH_MODELS/$model_name"
t_start=$(hearth_now)
deps_key=$({ basename "$base"; dpkg-deb -f "$deb" Depends Pre-Depends; } | sha256sum | cut -c1-16)
layer="$HEARTH_CACHE/pkgroot/deps-$deps_key.tar"
root=$(mktemp -d "$HEARTH_CACHE/pkgroot/run.XXXXXX")
archives="$HEARTH_CACHE/pkgroot/apt-archives"  # downloaded .debs, kept between runs
mkdir -p "$archives/partial"
cleanup() {
  umount -R "$root/proc" "$root/dev" "$root/tmp/.X11-unix" "$root/var/cache/apt/archives" 2>/dev/null || true
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
# A throwaway root: dpkg need not fsync every file it unpacks.
apt_get() { in_root apt-get -y -qq -o Dpkg::Options::=--force-unsafe-io "$@"; }
as_user() {  # the unprivileged user of the root, with a login's environment
  chroot --userspec=tester:tester "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/home/tester \
    USER=tester LANG=C.UTF-8 "$@"
}
# Every path of the root but the pseudo file systems, /tmp, and the package tools' own state:
# apt's caches, lists and extended_states (which packages were installed automatically), the
# logs, and ld.so's cache (ldconfig writes aux-cache the first time a library is installed).
listing() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./tmp -o -path ./run \
     -o -path ./var/cache/apt -o -path ./var/lib/apt -o -path ./var/log -o -path ./var/cache/ldconfig \) \
     -prune -o -print) | sed 's|^\.||' | sort
}
install_deb() {  # install_deb LOG: apt installs /tmp/hearth.deb, resolving what is missing
  apt_get install --no-install-recommends /tmp/hearth.deb >"$1" 2>&1 ||
    { cat "$1" >&2; hearth_die "apt-get install of $(basename "$deb") failed"; }
}
mount_all() {
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --bind "$archives" "$root/var/cache/apt/archives"
}

# The dependency layer: built from the base on a cold run.
if [ -s "$layer" ]; then
  tar -xf "$layer" -C "$root" --numeric-owner
  mount_all
  hearth_log "root with the dependencies (cached $(basename "$layer")) ready in $(( $(hearth_now) - t_start )) s"
else
  tar -xf "$base" -C "$root" --numeric-owner
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount_all
  in_root apt-get update -qq
  cp "$deb" "$root/tmp/hearth.deb"
  t0=$(hearth_now)
  install_deb "$out/apt-install-deps.log"
  hearth_log "apt installed $(basename "$deb") and $(( $(grep -c '^Setting up' "$out/apt-install-deps.log") - 1 )) dependencies from the mirror in $(( $(hearth_now) - t0 )) s"
  apt_get purge hearth >/dev/null
  umount "$root/var/cache/apt/archives"
  tar -cf "$layer.partial" -C "$root" --numeric-owner --one-file-system --exclude=./tmp/hearth.deb .
  mv "$layer.partial" "$layer"
  find "$HEARTH_CACHE/pkgroot" -maxdepth 1 -name 'deps-*.tar' ! -name "$(basename "$layer")" -delete  # older layers
  mount --bind "$archives" "$root/var/cache/apt/archives"
  hearth_log "cached the dependency layer $layer ($(du -m "$layer" | cut -f1) MB)"
fi
in_root useradd --create-home --shell /bin/bash tester
# The X server's sockets (pkgroot-window.sh starts Xvfb on this machine), seen from the root.
[ -d /tmp/.X11-unix ] || install -d -m 1777 /tmp/.X11-unix
mkdir -p "$root/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
listing >"$out/files-before.txt"

cp "$deb" "$root/tmp/hearth.deb"
t0=$(hearth_now)
install_deb "$out/apt-install.log"
hearth_log "apt installed $(basename "$deb") ($(grep -c '^Setting up' "$out/apt-install.log") packages set up) in $(( $(hearth_now) - t0 )) s"
in_root dpkg -L hearth | sort >"$out/installed-files.txt"

# The installed hearth-cli, from the root's /usr/bin, as the user.
t0=$(hearth_now)
as_user hearth-cli --version | tee "$out/version.txt"
grep -q "$(dpkg-deb -f "$deb" Version | sed 's/-[0-9]*$//')" "$out/version.txt" ||
  hearth_die "hearth-cli --version does not print the package's version"
as_user hearth-cli info >"$out/info.txt"
hearth_log "hearth-cli info: $(wc -l <"$out/info.txt") lines"
models="$root/home/tester/.cache/hearth/models"
mkdir -p "$models" && cp "$HEARTH_MODELS/$model_name" "$models/"
chroot "$root" chown -R tester:tester /home/tester/.cache
as_user hearth-cli generate --model "/home/tester/.cache/hearth/models/$model_name" \
  --prompt "The capital of France is" --raw --max-tokens 8 --temp 0 --json >"$out/generate.json"
grep -q '"text"' "$out/generate.json" || hearth_die "hearth-cli generate printed no text: $(cat "$out/generate.json")"
hearth_log "generate: $(cut -c1-160 "$out/generate.json")"
hearth_log "hearth-cli checks: $(( $(hearth_now) - t0 )) s"

t0=$(hearth_now)
bash "$(dirname "${BASH_SOURCE[0]}")/pkgroot-window.sh" "$root" "$out"
hearth_log "window check: $(( $(hearth_now) - t0 )) s"

apt_get purge hearth >"$out/apt-purge.log" 2>&1
listing >"$out/files-after.txt"
# Left behind: only the test user's own data (models, settings, history) may remain.
comm -3 "$out/files-before.txt" "$out/files-after.txt" >"$out/files-diff.txt" || true
if grep -v -E '^\s*/home/tester/' "$out/files-diff.txt" >"$out/files-left.txt"; then
  cat "$out/files-left.txt" >&2
  hearth_die "purging hearth left $(wc -l <"$out/files-left.txt") paths behind (above)"
fi
# The dependencies apt pulled in are marked automatic: autoremove would take them all.
n_auto=$(apt_get autoremove --purge --simulate | grep -c '^Purg' || true)
hearth_log "purged: nothing left but the user's data ($(wc -l <"$out/files-diff.txt") paths under /home/tester); autoremove would purge $n_auto dependencies"
hearth_log "package root test: $(( $(hearth_now) - t_start )) s"
