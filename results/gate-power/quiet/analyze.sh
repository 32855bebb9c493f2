#!/bin/bash
# As run: the three invocations in /tmp/q35/inv{1,2,3} (here: inv*/, gzipped; gunzip them
# into such directories to rerun). WSBENCH_BIN defaults to that run's binary copy.
# power table from the three A/B invocations: all 12 pairs, and the first 5
set -e
cd /work/main
export WSBENCH_BIN=${WSBENCH_BIN:-/tmp/q35/wsbench}
plants="p99_us=+10% p99_us=+20% p99_us=+30% p50_us=+10% p50_us=+20% p50_us=+30% cpu_us_per_op=+10% cpu_us_per_op=+20% cpu_us_per_op=+30%"
for n in ${NS:-12 5}; do
  for i in 1 2 3; do
    d=/tmp/q35/sub/inv$i-n$n; mkdir -p $d
    for f in base results; do
      python3 - /tmp/q35/inv$i/$f.csv $d/$f.csv $n <<'PY'
import csv, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = csv.DictReader(open(src)); rows = [x for x in r if int(x["run"]) < n]
w = csv.DictWriter(open(dst, "w", newline=""), fieldnames=r.fieldnames, lineterminator="\n"); w.writeheader(); w.writerows(rows)
PY
    done
    scripts/plant.sh $d $plants > $d/plant.txt 2> $d/plant.err || echo "plant failed $d"
    $WSBENCH_BIN compare $d/base.csv $d/results.csv --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
  done
done
