#!/bin/bash
# As run: the power table of the windowed p99 beside p99, p50 and CPU per request, from the
# A/B invocations of run.sh (in /tmp/q36/inv*; here inv*/, gzipped).
set -e
cd "$(dirname "$0")/../../.."
export WSBENCH_BIN=${WSBENCH_BIN:-/tmp/q36/wsbench}
plants="p99_windowed_us=+10% p99_windowed_us=+20% p99_windowed_us=+30% p99_us=+20% p50_us=+10% p50_us=+20% p50_us=+30% cpu_us_per_op=+10% cpu_us_per_op=+20% cpu_us_per_op=+30%"
for i in ${INVOCATIONS:-1 2}; do
  d=/tmp/q36/inv$i
  scripts/plant.sh $d $plants > $d/plant.txt 2> $d/plant.err || echo "plant failed $d"
  $WSBENCH_BIN compare $d/base.csv $d/results.csv --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
done
