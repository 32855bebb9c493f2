#!/bin/bash
# As run: the gate (`wsbench compare --hdr-dir --plant`, all 20 pairs) on each
# invocation of run.sh, then summary.py: cells flagged per planted change, false
# alarms, and the spread of the pairs' p99 log ratios, per invocation.
set -e
B=${WSBENCH_BIN:-/tmp/tune/wsbench}
plants=""
for m in p99_us p50_us cpu_us_per_op; do for c in 10 20 30; do plants="$plants --plant $m=+$c%"; done; done
for i in 1 2 3; do
  d=/tmp/tune/inv$i
  $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
  $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr $plants --json $d/plant.json --out $d/plant.md > /dev/null 2>&1
done
python3 "$(dirname "$0")/summary.py" /tmp/tune/inv1 /tmp/tune/inv2 /tmp/tune/inv3
