#!/usr/bin/env bash
# Creates the test-only Python environment (outside the repository, in the cache folder):
# gguf (reference dequantization) and tokenizers (reference BPE tokenization), pinned.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
want="gguf==0.19.0 numpy==2.4.6 tokenizers==0.23.3"
stamp="$HEARTH_VENV/.hearth-requirements"
if [ -x "$HEARTH_VENV/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  hearth_log "test Python ready: $HEARTH_VENV"; exit 0
fi
hearth_log "creating test Python in $HEARTH_VENV"
rm -rf "$HEARTH_VENV"
python3 -m venv "$HEARTH_VENV"
# shellcheck disable=SC2086
"$HEARTH_VENV/bin/python3" -m pip install --quiet --disable-pip-version-check $want
echo "$want" > "$stamp"
