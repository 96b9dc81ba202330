#!/bin/sh
# Regenerate docs/img/report-{64,512,4096}.png: discover on three simulated
# platforms, then a headless-Chromium screenshot of each report, trimmed and
# scaled to 75 %. About 5 minutes and 1 GB on two cores; needs chromium and
# ImageMagick (apt-get install chromium imagemagick).
#
#   scripts/report-screenshots.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
go build -o "$work/netaware" ./cmd/netaware
na="$work/netaware"
date="2026-11-23 00:00 UTC" # fixed, so that reruns differ only where the report does
"$na" discover -q --out "$work/r64" >/dev/null                                   # grid5000-4sites
"$na" discover -q --platform fram-like --blind --out "$work/r512" >/dev/null
"$na" discover -q --platform platform/testdata/scale/two-level-4096.yaml --level fast --out "$work/r4096" >/dev/null
"$na" report "$work/r64" --date "$date" >/dev/null
"$na" report "$work/r512" --date "$date" >/dev/null
"$na" report "$work/r4096" --truth platform/testdata/scale/two-level-4096.yaml --date "$date" >/dev/null
for n in 64 512 4096; do
	scripts/screenshot-report.sh "$work/r$n/report.html" "$work/full-$n.png" 1400,9000 2>/dev/null >/dev/null
	convert "$work/full-$n.png" -trim +repage -resize 75% -colors 256 "PNG8:docs/img/report-$n.png"
	echo "docs/img/report-$n.png"
done
