#!/bin/bash
# As run: the three invocations in /tmp/q35/inv{1,2,3} (here: inv*/, gzipped; gunzip them
# into such directories to rerun). WSBENCH_BIN defaults to that run's binary copy.
# three A/B invocations of identical code, open-loop cells, 12 runs of 1 s
B=/tmp/q35/wsbench
for i in 1 2 3; do
  d=/tmp/q35/inv$i; mkdir -p $d
  echo "inv$i start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload rpc-fanout,skewed,tcp-rpc \
     --duration 1s --warmup 300ms --runs 12 --base-bin $B --base-csv $d/base.csv --csv $d/results.csv --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
