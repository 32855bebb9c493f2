#!/usr/bin/env bash
# The gate's power, measured: plant a known change into one cell at a time of
# an A/B invocation's current file and count the cells `wsbench compare`
# flags.
#
#   scripts/plant.sh [--workload LIST] DIR METRIC=CHANGE [METRIC=CHANGE ...]
#
#   DIR             an A/B run: DIR/base.csv and DIR/results.csv (or current.csv), as
#                   `scripts/nightly.sh --ab REF` writes them (or any pair of
#                   files of one `wsbench run --base-bin` invocation)
#   METRIC=CHANGE   a CSV column compare judges and a relative change, e.g.
#                   p99_us=+20%  p50_us=+10%  cpu_us_per_op=+30%  throughput_per_s=-20%
#   --workload LIST only the cells of these workloads (comma-separated), e.g.
#                   the open-loop ones
#
# For each planted change and each cell of DIR/results.csv, `wsbench compare
# --plant` multiplies that cell's METRIC on the current side by (1 + CHANGE)
# in every run (with DIR/hdr, which `run --base-bin --hdr-dir` writes, the
# latency percentiles are judged on each side's added histograms, and the
# change multiplies every recorded latency), judges the whole file again, and
# counts the cell as flagged when its verdict on METRIC is `regressed` (for a
# change that makes the metric worse) or `improved` (better). Prints one line
# per cell and a markdown table: metric, change, cells, flagged, fraction.
# Also, once, the false alarms of the unplanted pair (comparisons not
# `unchanged`).
#
# Environment: WSBENCH_BIN (a built wsbench; default: cargo build --release).
# Reads CSV/JSON only. Exit status: 0, or 2 on unusable input.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

usage="usage: scripts/plant.sh [--workload LIST] DIR METRIC=CHANGE [METRIC=CHANGE ...]"
workloads=""
if [ "${1:-}" = --workload ]; then workloads=${2:?$usage}; shift 2; fi
dir=${1:?$usage}
shift
[ "$#" -ge 1 ] || { echo "error: no METRIC=CHANGE given; $usage" >&2; exit 2; }
current=$dir/results.csv
[ -f "$current" ] || current=$dir/current.csv
for f in "$dir/base.csv" "$current"; do
    [ -f "$f" ] || { echo "error: $f does not exist (an A/B run's directory holds base.csv and results.csv, or current.csv)" >&2; exit 2; }
done
bin=$(wsbench_bin)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hdr_args=()
if [ -d "$dir/hdr/base" ]; then hdr_args=(--hdr-dir "$dir/hdr"); fi
plant_args=()
for p in "$@"; do plant_args+=(--plant "$p"); done
"$bin" compare "$dir/base.csv" "$current" "${hdr_args[@]}" "${plant_args[@]}" --json "$tmp/plant.json" \
    --out "$tmp/plant.md" > /dev/null || { rc=$?; echo "error: wsbench compare --plant exited $rc" >&2; exit 2; }

python3 - "$tmp/plant.json" "$workloads" << 'PY'
import json, sys

report = json.load(open(sys.argv[1]))
wanted = set(filter(None, sys.argv[2].split(",")))
print(f"unplanted: {report['false_alarms']} comparison(s) not unchanged (false alarms when both sides run the same code)")
table = []
for p in report["plants"]:
    metric, change = p["plant"]["metric"], p["plant"]["change"]
    cells = [c for c in p["cells"] if not wanted or c["cell"]["workload"] in wanted]
    flagged = 0
    for c in cells:
        cell, verdict, q = c["cell"], c["verdict"] or "not judged", c["q_value"]
        flagged += verdict == p["expected"]
        print(f"{metric} {change:+.0%} {cell['scheduler']}/{cell['workers']}/{cell['workload']} {cell.get('knobs') or ''} "
              f"{cell.get('params') or ''}: {verdict} (q {q if q is None else f'{q:.3g}'})")
    table.append((metric, change, len(cells), flagged))
if wanted and not any(n for _, _, n, _ in table):
    print(f"error: no cell is of the workloads `{sys.argv[2]}`", file=sys.stderr)
    sys.exit(2)
print()
print("| metric | planted | cells | flagged | fraction |")
print("|---|---:|---:|---:|---:|")
for metric, change, n, flagged in table:
    print(f"| {metric} | {change:+.0%} | {n} | {flagged} | {flagged / n:.2f} |" if n else f"| {metric} | {change:+.0%} | 0 | 0 | |")
PY
