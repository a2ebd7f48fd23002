#!/usr/bin/env bash
# Starts the installed `hearth` as the test user of a package root (pkgroot-test.sh) on an
# Xvfb server of this machine (its socket is bound into the root) and checks that a top-level
# window titled "...Hearth..." of at least 400x300 is mapped, the process still runs, and the
# screen is not blank (a screenshot with some contrast). Usage: pkgroot-window.sh ROOT OUT_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
root="$1" out="$2"
xvfb_pid="" app_pid=""
cleanup() {
  if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
  if [ -n "$xvfb_pid" ]; then kill "$xvfb_pid" 2>/dev/null || true; wait "$xvfb_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$out/xvfb-display.txt" 2>"$out/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 100); do [ -s "$out/xvfb-display.txt" ] && break; sleep 0.1; done
[ -s "$out/xvfb-display.txt" ] || hearth_die "Xvfb did not start: $(tail -n 3 "$out/xvfb.log")"
display=":$(head -n1 "$out/xvfb-display.txt")"

chroot --userspec=tester:tester "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/home/tester \
  USER=tester LANG=C.UTF-8 DISPLAY="$display" hearth >"$out/hearth-window.log" 2>&1 &
app_pid=$!
window=""
for _ in $(seq 120); do
  kill -0 "$app_pid" 2>/dev/null || hearth_die "hearth exited: $(tail -n 5 "$out/hearth-window.log")"
  for id in $(xwininfo -display "$display" -root -tree | sed -n -E 's/^ *(0x[0-9a-f]+) "[^"]*Hearth[^"]*".*/\1/p'); do
    # The main window: mapped and at least 400x300 (a "Loading model" dialog is smaller).
    if xwininfo -display "$display" -id "$id" | awk '/Map State: IsViewable/ { v = 1 }
         /^ *Width:/ { w = $2 } /^ *Height:/ { h = $2 } END { exit !(v && w >= 400 && h >= 300) }'; then
      window="$id"; break
    fi
  done
  [ -n "$window" ] && break
  sleep 0.5
done
[ -n "$window" ] || hearth_die "no mapped Hearth main window within 60 s: $(tail -n 5 "$out/hearth-window.log")"
xwininfo -display "$display" -id "$window" >"$out/window-info.txt"
hearth_log "window $window $(sed -n 's/.*xwininfo: Window id: [^ ]* //p' "$out/window-info.txt"), $(sed -n 's/ *-geometry //p' "$out/window-info.txt")"
sleep 2  # let it paint, then make sure it is still running
kill -0 "$app_pid" 2>/dev/null || hearth_die "hearth exited after showing its window: $(tail -n 5 "$out/hearth-window.log")"
/usr/bin/import -display "$display" -window root "$out/window.png"
spread=$(/usr/bin/convert "$out/window.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
awk -v s="$spread" 'BEGIN { exit !(s > 0.01) }' || hearth_die "the screen is blank (grey-level deviation $spread)"
hearth_log "screenshot $out/window.png: grey-level deviation $spread"
