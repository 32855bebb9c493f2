#!/bin/bash
# As run (binary: 98ef8fa plus the base-side logs): three A/B invocations of identical code, the 18 open-loop cells of
# results/gate-power/quiet/, 20 runs of 1 s, with both sides' full histograms
# (--hdr-dir; the base's in hdr/base/). Output in /tmp/q37/inv{1,2,3}.
B=${WSBENCH_BIN:-/tmp/q37/wsbench}
for i in 1 2 3; do
  d=/tmp/q37/inv$i; mkdir -p $d
  echo "inv$i start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload rpc-fanout,skewed,tcp-rpc \
     --duration 1s --warmup 300ms --runs 20 --base-bin $B --base-csv $d/base.csv --csv $d/results.csv \
     --hdr-dir $d/hdr --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
touch /tmp/quiet-done
