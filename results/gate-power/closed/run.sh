#!/bin/bash
# As run: A/B invocations of identical code on the nightly's closed-loop
# cells at its default of 40 runs of 1 s (yield-many,
# spawn-many-remote-busy1, ping-pong x steal-half, global, tokio x 1, 2
# workers, the workloads' default parameters, --hdr-dir as the nightly).
# Output in $OUT/inv{1,..}.
#   INVS=1 OUT=/tmp/closed WSBENCH_BIN=target/release/wsbench results/gate-power/closed/run.sh
set -u
OUT=${OUT:-/tmp/closed}
B=${WSBENCH_BIN:-target/release/wsbench}
RUNS=${RUNS:-40}
for i in ${INVS:-1}; do
  d=$OUT/inv$i; mkdir -p $d
  echo "inv$i start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload yield-many,spawn-many-remote-busy1,ping-pong \
     --duration 1s --warmup 300ms --runs $RUNS --base-bin $B --base-csv $d/base.csv --csv $d/results.csv \
     --hdr-dir $d/hdr --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
