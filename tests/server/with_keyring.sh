#!/usr/bin/env bash
# Runs a test command inside a private D-Bus session with GNOME Keyring's Secret Service started
# and unlocked, so that qtkeychain stores keys in a real keychain on a headless machine. Its
# keyring files go to a scratch HOME, removed afterwards. HEARTH_IN_KEYRING=1 tells the test.
set -euo pipefail
# The user's caches stay where they are (the llama.cpp tools, models): only the keyring moves.
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" HEARTH_IN_KEYRING=1
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
dbus-run-session -- bash -c '
  printf "hearth-test" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
  "$@"' bash "$@"
