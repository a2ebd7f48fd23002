# Shared by Hearth's scripts: paths and small helpers. Source it; do not run it.
HEARTH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HEARTH_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/hearth"
HEARTH_MODELS="$HEARTH_CACHE/models"
HEARTH_VENV="$HEARTH_CACHE/venv"
HEARTH_BUILD="$HEARTH_ROOT/build"  # the release preset's binaryDir
# One compiler cache for every checkout (a CI clone, a second working tree): paths under the
# checkout are hashed relative to it and the working directory is left out of the hash, so a
# fresh clone in another folder reuses what any other checkout compiled. (Objects' debug info
# may then name the other checkout's build folder; nothing reads it.)
export CCACHE_DIR="${CCACHE_DIR:-$HEARTH_CACHE/ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$HEARTH_ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"

hearth_log() { printf '[hearth] %s\n' "$*" >&2; }
hearth_die() { printf '[hearth] error: %s\n' "$*" >&2; exit 1; }
hearth_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Seconds since the epoch, for stage timings.
hearth_now() { date +%s; }

# The Python environment the scripts use for pip (downloads and test-only packages), kept
# in the cache folder: a fresh Debian's system pip refuses to install into the system.
hearth_ensure_venv() {
  if [ ! -x "$HEARTH_VENV/bin/python3" ] || ! "$HEARTH_VENV/bin/python3" -m pip --version >/dev/null 2>&1; then
    hearth_log "creating Python environment $HEARTH_VENV"
    rm -rf "$HEARTH_VENV"
    python3 -m venv "$HEARTH_VENV" || hearth_die "python3 -m venv failed (is python3-venv installed?)"
  fi
}

# What this host can run, from CPUID and XCR0 (host_isa.c, built once into the cache folder):
# `hearth_host_isa` prints the extension names, `hearth_host_isa --cmake` ggml's CMake switches.
# Native code the tests build from other projects uses this instead of -march=native, which
# would enable extensions the CPU lists but the OS does not let a process use (AMX in a VM).
hearth_host_isa() {
  local src="$HEARTH_ROOT/packaging/scripts/host_isa.c" bin="$HEARTH_CACHE/bin/host_isa"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$HEARTH_CACHE/bin"
    cc -O1 -o "$bin.tmp" "$src" || hearth_die "cannot build $src"
    mv "$bin.tmp" "$bin"
  fi
  "$bin" "$@"
}

# hearth_fetch_llama_sdist PATH SHA256 VERSION: llama-cpp-python's source archive (the oracle's,
# whose vendored llama.cpp also gives llama-bench and llama-server) at PATH, fetched from PyPI
# with pip unless it is there already with that checksum.
hearth_fetch_llama_sdist() {
  local sdist=$1 sha=$2 version=$3
  if [ -f "$sdist" ] && echo "$sha  $sdist" | sha256sum --check --status; then return 0; fi
  hearth_ensure_venv
  hearth_log "downloading llama-cpp-python $version's source archive"
  mkdir -p "$(dirname "$sdist")"
  "$HEARTH_VENV/bin/python3" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$(dirname "$sdist")" "llama-cpp-python==$version"
  echo "$sha  $sdist" | sha256sum --check --status || hearth_die "checksum mismatch for $sdist"
}
