#!/usr/bin/env bash
# stage: Wine (hearth-cli.exe, installer)
# needs: build (release)|mingw-w64 (engine, hearth-cli.exe, NSIS)
# Runs the Windows build of hearth-cli (40-mingw.sh) under Wine (Debian's wine64) against the
# Linux build: greedy tokens on stories260K and SmolLM2 identical at the AVX2 level and at the
# best level the CPU runs, `info` identical, a corrupt GGUF refused with the same message, a
# model under a non-ASCII path with spaces and under a path longer than MAX_PATH; then installs
# hearth-cli.exe with its NSIS installer (/S), runs the installed program, uninstalls it (/S) and
# checks that the folder is gone. The Wine prefix is cached in $HEARTH_CACHE/wine-prefix.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || hearth_die "$wine is missing (install-deps.sh test installs wine64)"
build="${HEARTH_MINGW_BUILD:-$HEARTH_ROOT/build-mingw}"
exe="$build/app/cli_core/hearth-cli.exe"
linux="$HEARTH_BUILD/app/hearth-cli"
[ -f "$exe" ] || hearth_die "$exe is missing (40-mingw.sh builds it)"
[ -x "$linux" ] || hearth_die "$linux is missing (the release build)"
stories="$HEARTH_ROOT/../shared/testdata/stories260K.gguf"
smol="$HEARTH_MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
for f in "$stories" "$smol"; do [ -f "$f" ] || hearth_die "$f is missing"; done

# Wine without its Mono and Gecko prompts (mscoree, mshtml off), quiet, in a prefix of its own;
# arguments in UTF-8 whatever the caller's locale.
export WINEPREFIX="$HEARTH_CACHE/wine-prefix" WINEDLLOVERRIDES="mscoree,mshtml=" WINEDEBUG=-all
export WINESERVER=/usr/lib/wine/wineserver64 LC_ALL=C.UTF-8
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  hearth_log "creating the Wine prefix $WINEPREFIX"
  "$wine" wineboot --init >/dev/null 2>&1 || hearth_die "wineboot --init failed"
  "$WINESERVER" -w
fi
work=$(mktemp -d)
trap '"$WINESERVER" -k >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# A Unix path as Windows programs see it under Wine (drive Z: is /).
winpath() { printf 'Z:%s' "$(realpath -m "$1" | tr / '\\')"; }
# The JSON fields that must agree between the two builds (timings differ).
fields() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(json.dumps({k: d[k] for k in ("prompt_tokens", "tokens", "text", "finish_reason")}, ensure_ascii=False))'; }

# 1. Greedy tokens, Linux vs Windows, at the AVX2 level and the best level this CPU runs.
best=$("$linux" info | sed -n 's/^  kernels used: \([^ ]*\).*/\1/p')
runs=$("$linux" info | sed -n 's/^  levels this CPU runs: //p')
levels=()
if [[ " $runs " == *" avx2 "* ]]; then
  levels+=(avx2)
else
  hearth_log "this CPU cannot run the AVX2 kernels: only the $best level is compared"
fi
[ "$best" = avx2 ] || levels+=("$best")
for level in "${levels[@]}"; do
  for model in "$stories" "$smol"; do
    args=(generate --prompt "Once upon a time, in a small town" --raw --temp 0 --max-tokens 48 --json)
    want=$(HEARTH_CPU=$level "$linux" "${args[@]}" --model "$model" | fields)
    got=$(HEARTH_CPU=$level "$wine" "$exe" "${args[@]}" --model "$(winpath "$model")" | fields) ||
      hearth_die "hearth-cli.exe generate failed on $(basename "$model") at $level"
    [ "$got" = "$want" ] || hearth_die "tokens differ on $(basename "$model") at $level: Linux $want, Windows $got"
    n=$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["tokens"]))' "$got")
    hearth_log "$(basename "$model"), HEARTH_CPU=$level: $n greedy tokens identical to Linux: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tokens"][:12])' "$got")..."
  done
  used=$(HEARTH_CPU=$level "$wine" "$exe" info | sed -n 's/^  kernels used: //p')
  case "$used" in "$level "*) ;; *) hearth_die "under Wine with HEARTH_CPU=$level the kernels used are: $used" ;; esac
  hearth_log "under Wine, HEARTH_CPU=$level: kernels used: $used"
done
# The chat format too (SmolLM2's ChatML), and tokenize with non-ASCII text.
want=$("$linux" generate --model "$smol" --prompt "Name three colours." --temp 0 --max-tokens 24 --json | fields)
got=$("$wine" "$exe" generate --model "$(winpath "$smol")" --prompt "Name three colours." --temp 0 --max-tokens 24 --json | fields)
[ "$got" = "$want" ] || hearth_die "chat-formatted tokens differ: Linux $want, Windows $got"
# Beam search and speculative decoding (n-gram drafter; the draft-model drafter with
# stories260K drafting for itself): the same tokens.
for variant in "--beams 3" "--temp 0 --spec ngram" "--temp 0 --spec draft:MODEL"; do
  read -r -a extra <<<"$variant"
  lx=("${extra[@]/MODEL/$stories}")
  wx=("${extra[@]/MODEL/$(winpath "$stories")}")
  want=$("$linux" generate --model "$stories" --prompt "Once upon a time" --raw --max-tokens 32 --json "${lx[@]}" | fields)
  got=$("$wine" "$exe" generate --model "$(winpath "$stories")" --prompt "Once upon a time" --raw --max-tokens 32 --json "${wx[@]}" | fields) ||
    hearth_die "hearth-cli.exe generate $variant failed"
  [ "$got" = "$want" ] || hearth_die "generate $variant differs: Linux $want, Windows $got"
done
hearth_log "generate --beams 3, --spec ngram, --spec draft: tokens identical to Linux"
want=$("$linux" tokenize --model "$smol" --text "Zoë Li, 模型 ✓" --json)
got=$("$wine" "$exe" tokenize --model "$(winpath "$smol")" --text "Zoë Li, 模型 ✓" --json)
[ "$got" = "$want" ] || hearth_die "tokenize differs: Linux $want, Windows $got"
hearth_log "SmolLM2 chat-formatted greedy reply and tokenize of \"Zoë Li, 模型 ✓\" identical to Linux"

# 2. info: identical but for the file's path and the CUDA line (Windows has no plugin).
for model in "$stories" "$smol"; do
  "$linux" info --model "$model" | grep -v -e '^  file: ' -e '^  CUDA: ' >"$work/info.linux"
  "$wine" "$exe" info --model "$(winpath "$model")" | grep -v -e '^  file: ' -e '^  CUDA: ' >"$work/info.windows"
  diff -u "$work/info.linux" "$work/info.windows" >&2 || hearth_die "info --model $(basename "$model") differs"
done
hearth_log "info --model (stories260K, SmolLM2) identical to Linux: $(grep -m1 '^  parameters' "$work/info.windows")"

# 3. A corrupt GGUF: the same message and exit code.
head -c 4096 "$stories" >"$work/corrupt.gguf"
printf '\xff\xff\xff\xff' | dd of="$work/corrupt.gguf" bs=1 seek=8 conv=notrunc status=none  # tensor count
for cmd in generate info tokenize; do
  set +e
  "$linux" "$cmd" --model "$work/corrupt.gguf" --prompt x --text x >/dev/null 2>"$work/err.linux"
  rl=$?
  "$wine" "$exe" "$cmd" --model "$(winpath "$work/corrupt.gguf")" --prompt x --text x >/dev/null 2>"$work/err.windows"
  rw=$?
  set -e
  [ "$rl" = "$rw" ] && [ "$rl" = 1 ] || hearth_die "corrupt GGUF, $cmd: exit $rl on Linux, $rw on Windows"
  cmp -s "$work/err.linux" "$work/err.windows" || hearth_die "corrupt GGUF, $cmd: Linux says '$(cat "$work/err.linux")', Windows '$(cat "$work/err.windows")'"
done
hearth_log "corrupt GGUF refused alike (exit 1): $(cat "$work/err.windows")"

# 4. Paths as Windows users have them: spaces and non-ASCII names, and beyond MAX_PATH.
odd="$work/Zoë Li/模型"
mkdir -p "$odd" && cp "$stories" "$odd/model.gguf" && printf 'Once upon a time' >"$odd/prompt ✓.txt"
want=$("$linux" generate --model "$stories" --prompt "Once upon a time" --raw --temp 0 --max-tokens 24 --json | fields)
got=$("$wine" "$exe" generate --model "$(winpath "$odd/model.gguf")" --prompt-file "$(winpath "$odd/prompt ✓.txt")" --raw --temp 0 --max-tokens 24 --json | fields)
[ "$got" = "$want" ] || hearth_die "under '$(winpath "$odd/model.gguf")': $got, not $want"
hearth_log "model and prompt file under $(winpath "$odd")\\: tokens identical to Linux"
long="$work"
while [ ${#long} -lt 300 ]; do long="$long/a folder with a long name, $((${#long} % 97))"; done
mkdir -p "$long" && cp "$stories" "$long/模型 model.gguf"
path=$(winpath "$long/模型 model.gguf")
got=$("$wine" "$exe" generate --model "$path" --prompt "Once upon a time" --raw --temp 0 --max-tokens 24 --json | fields)
[ "$got" = "$want" ] || hearth_die "under a path of ${#path} characters: $got, not $want"
hearth_log "model under a path of ${#path} characters (MAX_PATH is 260): tokens identical to Linux"

# 5. The installer: silent install, the installed program runs, silent uninstall, folder gone.
installer=$(ls "$build"/packages/hearth-cli-*-win64.exe)
# Its default folder (the 64-bit Program Files; a name with a space). /D= is not used: Wine
# quotes an argument with spaces, and NSIS reads /D= only unquoted.
target='C:\Program Files\Hearth CLI'
unix_target="$WINEPREFIX/drive_c/Program Files/Hearth CLI"
if [ -e "$unix_target" ]; then  # left by an interrupted run
  (cd "$unix_target" && "$wine" "$target\\Uninstall.exe" /S) || true
  "$WINESERVER" -w
  rm -rf "$unix_target"
fi
set +e
"$wine" "$installer" /S
rc=$?
set -e
"$WINESERVER" -w
[ "$rc" = 0 ] || hearth_die "the installer exited with $rc"
[ -f "$unix_target/bin/hearth-cli.exe" ] || hearth_die "the installer did not put bin\\hearth-cli.exe in $target"
hearth_log "installer $(basename "$installer") /S: exit $rc, installed into $target"
got=$("$wine" "$target\\bin\\hearth-cli.exe" generate --model "$(winpath "$stories")" --prompt "Once upon a time" --raw --temp 0 --max-tokens 24 --json | fields)
[ "$got" = "$want" ] || hearth_die "the installed hearth-cli.exe gave $got, not $want"
hearth_log "installed $target\\bin\\hearth-cli.exe: $("$wine" "$target\\bin\\hearth-cli.exe" --version | tr -d '\r'), tokens identical to Linux"
uninstaller=$(cd "$unix_target" && ls Uninstall*.exe)
set +e
"$wine" "$target\\$uninstaller" /S
rc=$?
set -e
"$WINESERVER" -w  # the uninstaller runs from a copy of itself in %TEMP%
[ "$rc" = 0 ] || hearth_die "the uninstaller exited with $rc"
[ ! -e "$unix_target" ] || hearth_die "after uninstalling, $target still holds: $(cd "$unix_target" && find . | head)"
hearth_log "uninstaller $uninstaller /S: exit $rc, $target is gone"
