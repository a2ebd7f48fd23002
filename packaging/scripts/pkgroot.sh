# The clean Debian 12 root of the packaging test, built once with mmdebstrap and cached as a
# tarball outside the repository: $HEARTH_CACHE/pkgroot/bookworm-<key>.tar, the key a hash of
# the variant, the package list and the mirrors (this machine's apt sources for bookworm).
# Source it (after common.sh); needs root.
HEARTH_PKGROOT_CACHE="$HEARTH_CACHE/pkgroot"
# apt only (Essential + apt): anything more could hide a dependency the package forgot.
HEARTH_PKGROOT_VARIANT=apt
HEARTH_PKGROOT_INCLUDE=""

# The host's bookworm sources, one "deb URI SUITE main" line each (apt-cache policy reads every
# sources format); Debian's own mirror when none is configured.
pkgroot_mirrors() {
  local lines
  lines=$(apt-cache policy | sed -n -E 's|^ *[0-9]+ (https?://[^ ]+) (bookworm(-updates\|-security)?)/main amd64 Packages$|deb \1 \2 main|p' | sort -u)
  if [ -z "$lines" ]; then
    lines="deb http://deb.debian.org/debian bookworm main"
  fi
  printf '%s\n' "$lines"
}

pkgroot_key() {
  { echo "variant=$HEARTH_PKGROOT_VARIANT include=$HEARTH_PKGROOT_INCLUDE arch=amd64"; pkgroot_mirrors; } |
    sha256sum | cut -c1-16
}

# Prints the cached base tarball, building it first when absent.
pkgroot_base_tar() {
  local tar="$HEARTH_PKGROOT_CACHE/bookworm-$HEARTH_PKGROOT_VARIANT-$(pkgroot_key).tar"
  mkdir -p "$HEARTH_PKGROOT_CACHE"
  # One builder at a time: test.sh starts one early in the background (network-bound, so it
  # overlaps the CPU-bound build stages); the package stage then waits here for it.
  exec {lock_fd}>"$HEARTH_PKGROOT_CACHE/.lock"
  flock "$lock_fd"
  if [ ! -s "$tar" ]; then
    command -v mmdebstrap >/dev/null || hearth_die "mmdebstrap is missing (install-deps.sh test installs it)"
    mkdir -p "$HEARTH_PKGROOT_CACHE"
    hearth_log "building the clean Debian 12 root (mmdebstrap, once): $tar"
    local -a mirrors=()
    mapfile -t mirrors < <(pkgroot_mirrors)
    local -a include=()
    if [ -n "$HEARTH_PKGROOT_INCLUDE" ]; then include=(--include="$HEARTH_PKGROOT_INCLUDE"); fi
    mmdebstrap --quiet --mode=root --variant="$HEARTH_PKGROOT_VARIANT" --architectures=amd64 \
      "${include[@]}" bookworm "$tar.partial.tar" "${mirrors[@]}" >&2
    mv "$tar.partial.tar" "$tar"
  fi
  exec {lock_fd}>&-
  echo "$tar"
}
