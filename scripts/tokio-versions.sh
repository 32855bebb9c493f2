#!/usr/bin/env bash
# Published tokio versions side by side with steal-half, in one interleaved
# invocation (each version's binary built once and cached under
# target/wsbench-refs/ on first use), on the message-passing workloads and
# tokio's scheduler benchmarks; then a table of medians with the mechanism
# columns (CPU, worker unparks, steals and polls per op, cross-worker
# hand-offs per message). A run whose iterations fell into several modes
# (message-passing workloads) has no whole-run means: the table counts
# such runs (`mixed`) and gives each mode's time per message apart.
#
#   scripts/tokio-versions.sh [OUT_DIR]
#   VERSIONS (default "1.44.2 1.50.0 1.51.0 1.51.2"; the plain `tokio` row, this
#   build's tokio, is added), WORKERS (2), RUNS (5), DURATION (500ms),
#   WORKLOADS (channel-ping-pong,pipeline,yield-many,ping-pong,chained-spawn,
#   spawn-many-local) set the matrix. WSBENCH_BIN=path runs that binary.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-results/tokio-versions/$(date -u +%Y%m%dT%H%M%SZ)}"
versions="${VERSIONS:-1.44.2 1.50.0 1.51.0 1.51.2}"
workloads="${WORKLOADS:-channel-ping-pong,pipeline,yield-many,ping-pong,chained-spawn,spawn-many-local}"
mkdir -p "$out"
if [ -e "$out/results.csv" ]; then
    echo "$out/results.csv exists; give a new OUT_DIR" >&2
    exit 2
fi
bin="${WSBENCH_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --release -q -p wsbench
    bin=target/release/wsbench
fi
scheds=""
for v in $versions; do scheds="${scheds}tokio@$v,"; done
scheds="${scheds}tokio,steal-half"
nice -n 10 "$bin" run --sched "$scheds" --workers "${WORKERS:-2}" --workload "$workloads" \
    --runs "${RUNS:-5}" --duration "${DURATION:-500ms}" --warmup 100ms --interleave \
    --csv "$out/results.csv" -q > "$out/run.txt"
python3 - "$out/results.csv" > "$out/table.md" <<'EOF'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
def per_op(r, column):
    ops = float(r["ops"] or 0)
    return float(r[column]) / ops if r[column] and ops > 0 else None
def extra(r, name):
    for kv in r["extras"].split(";"):
        k, _, v = kv.partition("=")
        if k == name:
            return float(v)
    return None
figures = [
    ("ns/op", lambda r: 1e9 / float(r["throughput_per_s"]) if r["throughput_per_s"] else None),
    ("CPU µs/op", lambda r: float(r["cpu_us_per_op"]) if r["cpu_us_per_op"] else None),
    ("unparks/op", lambda r: per_op(r, "unparks")),
    ("steals/op", lambda r: per_op(r, "steals")),
    ("polls/op", lambda r: per_op(r, "polls")),
    ("cross-worker/msg", lambda r: extra(r, "cross_worker_per_message")),
]
def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
def fmt(v):
    if v is None:
        return "–"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
def modes(cell):
    """Runs with several modes, and each mode's median ns/message over them."""
    mixed = [r for r in cell if (extra(r, "modes") or 1) > 1]
    if not mixed:
        return "0"
    most = int(max(extra(r, "modes") for r in mixed))
    each = [fmt(med([extra(r, f"mode{n}_ns_per_message") for r in mixed])) for n in range(1, most + 1)]
    return f"{len(mixed)} ({' / '.join(each)} ns/msg)"
scheds = list(dict.fromkeys(r["scheduler"] for r in rows))
print("| workload | runtime | version | runs | " + " | ".join(n for n, _ in figures) + " | mixed |")
print("|---|---|---|---:|" + "---:|" * len(figures) + "---|")
for workload in dict.fromkeys(r["workload"] for r in rows):
    for sched in scheds:
        cell = [r for r in rows if r["workload"] == workload and r["scheduler"] == sched]
        if not cell:
            continue
        version = cell[0]["runtime_version"] or "(ours)"
        values = " | ".join(fmt(med([f(r) for r in cell])) for _, f in figures)
        print(f"| {workload} | {sched} | {version} | {len(cell)} | {values} | {modes(cell)} |")
EOF
cat "$out/table.md"
echo "rows: $out/results.csv; table: $out/table.md"
