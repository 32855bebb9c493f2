#!/bin/bash
# As run: the gate with the shift test (`compare --hdr-dir`, and with planted
# changes) on stored A/B invocations of identical code, then the counts:
#  - ../tuned/summary.py per invocation of this folder (cells flagged per
#    planted change, false alarms);
#  - ../tuned/alpha.py over the given invocations (false alarms and power at
#    other levels, over 108 comparisons and the full nightly's 648);
#  - ../tuned/confirm.py (with the second stage, offline).
# Unpacks into $G/. Invocations: this folder's inv1-3 and the six of
# ../pooled/ and ../tuned/ (the same files the added histograms were measured on).
#   WSBENCH_BIN=target/release/wsbench results/gate-power/shift/analyze.sh
set -e
G=${GS:-/tmp/gs}
here=$(cd "$(dirname "$0")" && pwd)
B=${WSBENCH_BIN:-$here/../../../target/release/wsbench}
plants=""
for m in p99_us p50_us cpu_us_per_op; do for c in 10 20 30; do plants="$plants --plant $m=+$c%"; done; done
dirs=()
for src in pooled tuned shift; do
  for i in 1 2 3; do
    s=$here/../$src/inv$i
    [ -f $s/base.csv.gz ] || continue
    d=$G/$src/inv$i; rm -rf $d; mkdir -p $d
    zcat $s/base.csv.gz > $d/base.csv
    zcat $s/results.csv.gz > $d/results.csv
    tar xzf $s/hdr.tar.gz -C $d
    $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
    $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr $plants --json $d/plant.json --out $d/plant.md > /dev/null
    dirs+=($d)
  done
done
for src in pooled tuned shift; do
  ls -d $G/$src/inv* > /dev/null 2>&1 || continue
  echo "== $src/ (per invocation)"
  python3 $here/../tuned/summary.py $G/$src/inv* | sed "s#$G/$src/##"
done
echo "== all ${#dirs[@]} invocations"
python3 $here/../tuned/alpha.py "${dirs[@]}"
python3 $here/../tuned/confirm.py "${dirs[@]}"
python3 $here/detectable.py "${dirs[@]}"
