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
import csv, json, math, statistics, sys
p = json.load(open(sys.argv[1] + "/plant.json"))
# Each cell's pairs: sd of log(current/base) throughput, and the extreme ratios.
t = {}
for side in ("base", "results"):
    for x in csv.DictReader(open(f"{sys.argv[1]}/{side}.csv")):
        t[(side, x["scheduler"], x["workers"], x["workload"], x["run"])] = float(x["throughput_per_s"])
for c in sorted({k[1:4] for k in t}):
    lr = [math.log(t[("results",) + c + (r,)] / t[("base",) + c + (r,)])
          for r in sorted({k[4] for k in t if k[1:4] == c}) if ("results",) + c + (r,) in t and ("base",) + c + (r,) in t]
    print(f"  throughput pairs {'/'.join(c)}: sd of log ratio {statistics.stdev(lr):.3f}, ratio {math.exp(min(lr)):.2f} to {math.exp(max(lr)):.2f}")
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
