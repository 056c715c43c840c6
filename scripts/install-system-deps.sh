#!/usr/bin/env bash
# Installs the Debian packages a task needs, only those missing: `start` (Chromium, to run
# Stitch), `bench` (aria2, the benchmark's comparison; ffmpeg to make its stream and
# save it as the stream's reference), `bench-play` (ffmpeg to make the clips,
# Chromium and Firefox ESR to play them), `test` (Chromium, Firefox ESR and ffmpeg for the
# end-to-end tests; ffmpeg makes the seek tests' clips; aria2 for the hand-off's tests; chromium-l10n for the German UI in
# tests/e2e/locale.test.ts). Safe to run again.
# Each entry is `<command or absolute file path>:<package>`: the package is installed when that is missing.
set -euo pipefail
case "${1:-test}" in
  start) needed=(chromium:chromium) ;;
  bench) needed=(aria2c:aria2 ffmpeg:ffmpeg) ;;
  bench-play) needed=(ffmpeg:ffmpeg chromium:chromium firefox-esr:firefox-esr) ;;
  *) needed=(chromium:chromium firefox-esr:firefox-esr ffmpeg:ffmpeg aria2c:aria2 /usr/lib/chromium/locales/de.pak:chromium-l10n) ;;
esac
want=()
for pair in "${needed[@]}"; do
  what="${pair%%:*}"
  if [[ "$what" == /* ]]; then [ -e "$what" ] || want+=("${pair##*:}"); else command -v "$what" >/dev/null 2>&1 || want+=("${pair##*:}"); fi
done
[ ${#want[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "installing Debian packages: ${want[*]}"
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${want[@]}" >/dev/null
