#!/bin/bash
# As run: is p99's noise the VM's own settings? Three A/B invocations of identical
# code, the 18 open-loop cells of ../pooled/ (20 runs of 1 s, --hdr-dir), in the order
# tuned, default, tuned. "tuned" = the kernel's DAMON monitor off and guest halt
# polling on (200 us); "default" = this VM as booted (kdamond.0 on, its pageout
# scheme; haltpoll.guest_halt_poll_ns=0 on the kernel command line). Both settings
# are restored on exit. Output in /tmp/tune/inv{1,2,3}. Needs root.
# Also as run, three more invocations as booted (repeat/):
#   MODES="default default default" OUT=/tmp/tune2 ./run.sh
set -u
OUT=${OUT:-/tmp/tune}
B=${WSBENCH_BIN:-/tmp/tune/wsbench}
K=/sys/kernel/mm/damon/admin/kdamonds/0/state
H=/sys/module/haltpoll/parameters/guest_halt_poll_ns
restore() { echo on > $K; echo 0 > $H; }
trap restore EXIT
read -r -a modes <<< "${MODES:-tuned default tuned}"
for i in 1 2 3; do
  m=${modes[$((i-1))]}
  if [ $m = tuned ]; then echo off > $K; echo 200000 > $H; else restore; fi
  d=$OUT/inv$i; mkdir -p $d
  echo "inv$i $m start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) kdamond $(cat $K) halt_poll_ns $(cat $H)"
  $B run --sched steal-half,global,tokio --workers 1,2 --workload rpc-fanout,skewed,tcp-rpc \
     --duration 1s --warmup 300ms --runs 20 --base-bin $B --base-csv $d/base.csv --csv $d/results.csv \
     --hdr-dir $d/hdr --quiet > $d/table.txt 2> $d/stderr.txt
  echo "inv$i $m rc=$? end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
