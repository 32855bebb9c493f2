#!/bin/bash
# As run: A/B invocations of identical code (a1a9fba's binary against itself), the same
# 18 open-loop cells and run length as ../quiet/run.sh, now with p99_windowed_us.
B=${WSBENCH_BIN:-/tmp/q36/wsbench}
for i in ${INVOCATIONS:-1 2}; do
  d=/tmp/q36/inv$i; mkdir -p $d
  echo "inv$i start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload rpc-fanout,skewed,tcp-rpc \
     --duration 1s --warmup 300ms --runs 12 --base-bin $B --base-csv $d/base.csv --csv $d/results.csv --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
