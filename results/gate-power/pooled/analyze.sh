#!/bin/bash
# As run: the gate itself (`wsbench compare --hdr-dir --plant`) on the three
# invocations of run.sh, with all 20 pairs and with the first 12 and 16
# (runs 0..n-1 of the same files; the logs hold all 20, compare pairs only
# the runs in the CSVs). Then family.py: the same planted p-values in a
# Benjamini-Hochberg family 6 times as large, the full nightly matrix's.
set -e
B=${WSBENCH_BIN:-/work/main/target/release/wsbench}
plants=""
for m in p99_us p50_us cpu_us_per_op; do for c in 10 20 30; do plants="$plants --plant $m=+$c%"; done; done
for n in 12 16 20; do
  for i in 1 2 3; do
    d=/tmp/q37/sub/inv$i-n$n; mkdir -p $d; rm -f $d/*.json $d/*.md
    for f in base results; do
      python3 - /tmp/q37/inv$i/$f.csv $d/$f.csv $n <<'PY'
import csv, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = csv.DictReader(open(src)); rows = [x for x in r if int(x["run"]) < n]
w = csv.DictWriter(open(dst, "w", newline=""), fieldnames=r.fieldnames, lineterminator="\n"); w.writeheader(); w.writerows(rows)
PY
    done
    $B compare $d/base.csv $d/results.csv --hdr-dir /tmp/q37/inv$i/hdr --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
    $B compare $d/base.csv $d/results.csv --hdr-dir /tmp/q37/inv$i/hdr $plants --json $d/plant.json --out $d/plant.md > /dev/null 2>&1
  done
done
python3 "$(dirname "$0")/family.py" /tmp/q37/sub
