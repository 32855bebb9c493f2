#!/bin/bash
# Recomputes summary.txt and alpha-6inv.txt from the stored data: unpacks this
# folder's three invocations and ../pooled/'s three into /tmp/gp/, runs the gate
# (`compare --hdr-dir`, and with the planted changes) on each, then summary.py
# (this folder's) and alpha.py (all six).   WSBENCH_BIN=... ./from-stored.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
B=${WSBENCH_BIN:-$here/../../../target/release/wsbench}
plants=""
for m in p99_us p50_us cpu_us_per_op; do for c in 10 20 30; do plants="$plants --plant $m=+$c%"; done; done
for src in pooled tuned; do
  for i in 1 2 3; do
    d=/tmp/gp/$src/inv$i; rm -rf $d; mkdir -p $d
    zcat $here/../$src/inv$i/base.csv.gz > $d/base.csv
    zcat $here/../$src/inv$i/results.csv.gz > $d/results.csv
    tar xzf $here/../$src/inv$i/hdr.tar.gz -C $d
    $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
    $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr $plants --json $d/plant.json --out $d/plant.md > /dev/null
  done
done
python3 $here/summary.py /tmp/gp/tuned/inv1 /tmp/gp/tuned/inv2 /tmp/gp/tuned/inv3 | sed 's#/tmp/gp/tuned/##'
python3 $here/alpha.py /tmp/gp/pooled/inv{1,2,3} /tmp/gp/tuned/inv{1,2,3}
