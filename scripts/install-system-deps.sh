#!/usr/bin/env bash
# Installs the Debian packages the tests and benchmarks need (Chromium and Firefox ESR for the
# end-to-end tests, aria2 for the benchmark comparison). Safe to run again: it installs only what is missing.
set -euo pipefail
want=()
[ "${1:-}" = bench ] || command -v chromium >/dev/null 2>&1 || want+=(chromium)  # the bench needs only aria2
[ "${1:-}" = bench ] || command -v firefox-esr >/dev/null 2>&1 || want+=(firefox-esr)
[ "${STITCH_SKIP_ARIA2:-}" = 1 ] || command -v aria2c >/dev/null 2>&1 || want+=(aria2)
[ ${#want[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "installing Debian packages: ${want[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
