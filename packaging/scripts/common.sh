# Shared by Hearth's scripts: paths and small helpers. Source it; do not run it.
HEARTH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HEARTH_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/hearth"
HEARTH_MODELS="$HEARTH_CACHE/models"
HEARTH_VENV="$HEARTH_CACHE/venv"
HEARTH_BUILD="$HEARTH_ROOT/build"  # the release preset's binaryDir

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
