#!/usr/bin/env bash
# tokio's scheduler benchmarks (benches/rt_multi_threaded.rs parameters) on
# steal-half vs tokio (2 workers) and current-thread vs tokio current_thread
# (1 worker), in several harness processes whose scheduler order
# alternates, all appended to one CSV; then the median time per iteration
# over every run and the ratio ours/tokio (<= 1.0: ours no slower).
#
#   scripts/tokio-benches.sh [PROCESSES] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
procs="${1:-4}"
out="${2:-results/tokio-benches/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
csv="$out/runs.csv"
workloads=spawn-many-local,spawn-many-remote-idle,spawn-many-remote-busy1,spawn-many-remote-busy2,yield-many,ping-pong,chained-spawn
cargo build --release -q -p wsbench
bin=target/release/wsbench
for p in $(seq 1 "$procs"); do
    if (( p % 2 )); then multi=steal-half,tokio; single=current-thread,tokio-current
    else multi=tokio,steal-half; single=tokio-current,current-thread; fi
    "$bin" --quiet --sched "$multi" --workers 2 --workload "$workloads" --runs 3 --duration 1s --seed "$p" --csv "$csv" >/dev/null
    "$bin" --quiet --sched "$single" --workers 1 --workload "$workloads" --runs 3 --duration 1s --seed "$p" --csv "$csv" >/dev/null
done
python3 - "$csv" <<'PY' | tee "$out/summary.md"
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("status", "ok") in ("ok", "")]
cells = {}
for r in rows:
    thr = float(r["throughput_per_s"])
    if thr > 0:
        cells.setdefault((r["workload"], r["workers"], r["scheduler"]), []).append(1e3 / thr)
pairs = [("steal-half", "tokio", "2"), ("current-thread", "tokio-current", "1")]
print("| workload | ours | workers | ours ms/iter | tokio ms/iter | ratio ours/tokio | runs |")
print("|---|---|---|---|---|---|---|")
for wl in sorted({k[0] for k in cells}):
    for ours, ref, w in pairs:
        a, b = cells.get((wl, w, ours)), cells.get((wl, w, ref))
        if not a or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {wl} | {ours} | {w} | {ma:.3f} | {mb:.3f} | {ma / mb:.2f} | {len(a)}/{len(b)} |")
PY
echo "runs: $csv"
