#!/bin/sh
# Screenshot a netaware report with headless Chromium, fully offline.
#
#   scripts/screenshot-report.sh DIR/report.html [OUT.png] [WIDTH,HEIGHT]
#
# Writes OUT.png (default: report.png next to the report) and prints
# Chromium's console log (JavaScript errors show as "Uncaught" or
# "ERROR:CONSOLE") on stderr. Needs chromium (apt-get install chromium).
set -eu
html=${1:?usage: $0 REPORT.html [OUT.png] [WIDTH,HEIGHT]}
out=${2:-$(dirname "$html")/report.png}
size=${3:-1400,3000}
chrome=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chrome" ]; then
	echo "screenshot-report: chromium not found (apt-get install chromium)" >&2
	exit 3
fi
case $html in /*) ;; *) html=$(pwd)/$html ;; esac
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--hide-scrollbars --user-data-dir="$profile" --enable-logging=stderr --v=0 \
	--screenshot="$out" --window-size="$size" "file://$html"
echo "$out"
