#!/usr/bin/env bash
# Installs the test-only Python packages into Hearth's environment (outside the repository):
# gguf (reference dequantization and GGUF parsing), tokenizers (reference BPE) and openai (the
# official client, run against hearth-cli serve by tests/server), pinned.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
want="gguf==0.19.0 numpy==2.4.6 tokenizers==0.23.3 openai==1.109.1"
stamp="$HEARTH_VENV/.hearth-test-requirements"
hearth_ensure_venv
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  hearth_log "test Python packages ready in $HEARTH_VENV"; exit 0
fi
hearth_log "installing test Python packages: $want"
# shellcheck disable=SC2086
"$HEARTH_VENV/bin/python3" -m pip install --quiet --disable-pip-version-check $want
echo "$want" > "$stamp"
