#!/bin/bash
# As run: three A/B invocations of identical code at the nightly's new
# defaults, 40 runs of 1 s (the 18 open-loop cells of ../pooled/, --hdr-dir),
# on the VM as booted. Output in $OUT/inv{1,2,3}.
#   OUT=/tmp/len WSBENCH_BIN=target/release/wsbench results/gate-power/length/run.sh
# 64 pairs, two invocations (stop 50):
#   RUNS=64 INVS="1 2" OUT=/tmp/len64 WSBENCH_BIN=/tmp/wsb64 results/gate-power/length/run.sh
set -u
OUT=${OUT:-/tmp/len}
B=${WSBENCH_BIN:-target/release/wsbench}
RUNS=${RUNS:-40}
for i in ${INVS:-1 2 3}; do
  d=$OUT/inv$i; mkdir -p $d
  echo "inv$i start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload rpc-fanout,skewed,tcp-rpc \
     --duration 1s --warmup 300ms --runs $RUNS --base-bin $B --base-csv $d/base.csv --csv $d/results.csv \
     --hdr-dir $d/hdr --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
