#!/bin/bash
# As run: the gate on this folder's A/B invocations of identical code
# (run.sh, stored as invN/{base,results}.csv.gz and hdr.tar.gz), with
# planted changes in the metrics closed-loop cells gate: throughput -10,
# -20, -30 %, CPU per request +10, +20, +30 %, and p50 and p99 +20 %.
# Unpacks into $G/invN; prints compare's plant summary per invocation and
# the table by workload (../length/byworkload.py) and the detectable change
# per cell (../shift/detectable.py).
#   WSBENCH_BIN=target/release/wsbench results/gate-power/closed/analyze.sh > analysis.txt
set -e
G=${GL:-/tmp/gclosed}
here=$(cd "$(dirname "$0")" && pwd)
B=${WSBENCH_BIN:-$here/../../../target/release/wsbench}
plants=""
for c in 10 20 30; do plants="$plants --plant throughput_per_s=-$c%"; done
for c in 10 20 30; do plants="$plants --plant cpu_us_per_op=+$c%"; done
plants="$plants --plant p50_us=+20% --plant p99_us=+20%"
dirs=()
for s in $here/inv*; do
  d=$G/$(basename $s); rm -rf $d; mkdir -p $d
  for f in base results; do zcat $s/$f.csv.gz > $d/$f.csv; done
  tar xzf $s/hdr.tar.gz -C $d
  $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr --json $d/compare.json --out $d/compare.md > /dev/null 2>&1 || true
  $B compare $d/base.csv $d/results.csv --hdr-dir $d/hdr $plants --json $d/plant.json --out $d/plant.md > /dev/null
  echo "==== $(basename $s)"
  python3 - $d <<'PY'
import json, sys
p = json.load(open(sys.argv[1] + "/plant.json"))
print(f"false alarms {p['false_alarms']} of {p['comparisons']}")
for x in p["plants"]:
    v = [c["verdict"] for c in x["cells"]]
    print(f"  {x['plant']['metric']} {x['plant']['change'] * 100:+.0f}%: {sum(a == x['expected'] for a in v)}/{len(v)}"
          f" (not judged {sum(a == 'not judged' for a in v)})")
PY
  dirs+=($d)
done
echo "==== by workload"
python3 $here/../length/byworkload.py "${dirs[@]}"
echo "==== detectable change per cell"
METRICS="throughput_per_s cpu_us_per_op p50_us p99_us" python3 $here/../shift/detectable.py "${dirs[@]}"
