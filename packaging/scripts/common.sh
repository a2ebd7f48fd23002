# Shared by Hearth's scripts: paths and small helpers. Source it; do not run it.
HEARTH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HEARTH_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/hearth"
HEARTH_MODELS="$HEARTH_CACHE/models"
HEARTH_VENV="$HEARTH_CACHE/venv"
HEARTH_BUILD="${HEARTH_BUILD:-$HEARTH_ROOT/build}"

hearth_log() { printf '[hearth] %s\n' "$*" >&2; }
hearth_die() { printf '[hearth] error: %s\n' "$*" >&2; exit 1; }
hearth_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
