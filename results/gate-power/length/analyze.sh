#!/bin/bash
# As run: the gate on this folder's A/B invocations of identical code at 40
# pairs (run.sh), with planted changes, and the same invocations cut to their
# first 20 pairs (runs 0..19 of both CSVs: the old default, on the same
# machine hours). Then ../tuned/summary.py per invocation, ../tuned/alpha.py
# (false alarms and power, over 108 comparisons and the full nightly's 648),
# ../tuned/confirm.py (with the second stage, offline) and
# ../shift/detectable.py, for each cut. Unpacks into $G/{40,20}/invN.
#   WSBENCH_BIN=target/release/wsbench results/gate-power/length/analyze.sh
# The 64-pair invocations (p64/, stop 50), whole and cut to 40 and 20:
#   SRC=results/gate-power/length/p64 NS="64 40 20" GL=/tmp/gl64 \
#     WSBENCH_BIN=target/release/wsbench results/gate-power/length/analyze.sh
# The first cut in NS is the whole file and the only one with --hdr-dir.
set -e
G=${GL:-/tmp/gl}
here=$(cd "$(dirname "$0")" && pwd)
src=${SRC:-$here}
NS=${NS:-40 20}
top=${NS%% *}
B=${WSBENCH_BIN:-$here/../../../target/release/wsbench}
plants=""
for m in p99_us p50_us cpu_us_per_op; do for c in 10 20 30; do plants="$plants --plant $m=+$c%"; done; done
for n in $NS; do
  dirs=()
  for i in 1 2 3; do
    s=$src/inv$i
    [ -f $s/base.csv.gz ] || continue
    d=$G/$n/inv$i; rm -rf $d; mkdir -p $d
    for f in base results; do
      # run is the 5th column's name in the header; keep runs below $n.
      zcat $s/$f.csv.gz | awk -F, -v n=$n 'NR==1 { for (k = 1; k <= NF; k++) if ($k == "run") r = k; print; next } $r < n' > $d/$f.csv
    done
    tar xzf $s/hdr.tar.gz -C $d
    h=(--hdr-dir $d/hdr); [ $n = $top ] || h=()
    $B compare $d/base.csv $d/results.csv "${h[@]}" --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
    $B compare $d/base.csv $d/results.csv "${h[@]}" $plants --json $d/plant.json --out $d/plant.md > /dev/null
    dirs+=($d)
  done
  echo "==== $n pairs"
  python3 $here/../tuned/summary.py "${dirs[@]}" | sed "s#$G/$n/##"
  python3 $here/../tuned/alpha.py "${dirs[@]}"
  python3 $here/../tuned/confirm.py "${dirs[@]}"
  python3 $here/../shift/detectable.py "${dirs[@]}"
done
