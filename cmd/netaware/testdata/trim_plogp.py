#!/usr/bin/env python3
"""Reduce a PLogP dataset to what `netaware cluster --distance plogp --size 0`
reads: per ordered pair, L and the means of o_s(0), o_r(0) and g(0), to 6
significant digits. Output: a line "size N", then "a b L os or g" per pair.
The acceptance tests (cluster_acceptance_test.go) rebuild the dataset from it.

Made with (simulated, noise on, R = 32):
  netaware probe plogp --platform PLATFORM --reps 32 --max-size 1KiB \
      --max-extra 0 --sat-max 1280 -q --out full.json
  python3 trim_plogp.py full.json > PLATFORM-plogp-r32.txt
"""
import json, sys

d = json.load(open(sys.argv[1]))
s = d['plogp']
assert s['complete'], 'campaign not complete'
print('size %d' % d['world']['size'])
for p in s['pairs']:
    res = p['result']
    z = [z for z in res['sizes'] if z['bytes'] == 0][0]
    print('%d %d %.6g %.6g %.6g %.6g' % (p['a'], p['b'], res['L_s'], z['os_s']['mean'], z['or_s']['mean'], z['g_s']))
