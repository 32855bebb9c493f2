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
# For each planted change and each cell of DIR/results.csv, a copy of the file
# has that cell's METRIC multiplied by (1 + CHANGE) in every run, and
# `wsbench compare DIR/base.csv COPY` judges it. The cell counts as flagged
# when its verdict on METRIC is `regressed` (for a change that makes the metric
# worse) or `improved` (better). Prints one line per cell and a markdown table:
# metric, change, cells, flagged, fraction. Also, once, the false alarms of the
# unplanted pair (comparisons not `unchanged`). Planting 0% measures the same.
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

python3 - "$bin" "$dir" "$current" "$tmp" "$workloads" "$@" << 'PY'
import csv, json, re, subprocess, sys

bin_, dir_, current, tmp, workloads = sys.argv[1:6]
plants = sys.argv[6:]
HIGHER_IS_BETTER = {"throughput_per_s"}
KEY = ["scheduler", "workers", "workload", "knobs", "params", "rate_per_s", "cpus", "cpuset"]

def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)

parsed = []
for p in plants:
    m = re.fullmatch(r"([a-z0-9_]+)=([+-]?[0-9]+(?:\.[0-9]+)?)%", p)
    if not m:
        fail(f"`{p}` is not METRIC=CHANGE; allowed: a CSV column and a signed percentage, e.g. p99_us=+20%")
    parsed.append((m.group(1), float(m.group(2)) / 100.0))

with open(current, newline="") as f:
    reader = csv.DictReader(f)
    header, rows = reader.fieldnames, list(reader)
for metric, _ in parsed:
    if metric not in header:
        fail(f"`{metric}` is not a column of {current}")
wanted = set(filter(None, workloads.split(",")))
cells = []
for r in rows:
    key = tuple(r.get(k, "") for k in KEY)
    if key not in cells and (not wanted or r["workload"] in wanted):
        cells.append(key)
if not cells:
    fail(f"no cell of {current} is of the workloads `{workloads}`")

def compare(path):
    out = f"{tmp}/compare.json"
    done = subprocess.run([bin_, "compare", f"{dir_}/base.csv", path, "--json", out, "--out", f"{tmp}/compare.md"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr)
        fail(f"wsbench compare exited {done.returncode} on {path}")
    if path == current:
        sys.stderr.write(done.stderr)  # compare's warnings, once
    with open(out) as f:
        return json.load(f)["comparisons"]

def same_cell(c, key):
    cell = c["cell"]
    return tuple("" if cell.get(k) is None else str(cell.get(k)) for k in KEY) == key

alarms = [c for c in compare(current) if c["verdict"] != "unchanged"]
print(f"unplanted: {len(alarms)} comparison(s) not unchanged (false alarms when both sides run the same code)")
table = []
for metric, change in parsed:
    worse = (change < 0) if metric in HIGHER_IS_BETTER else (change > 0)
    expect = "regressed" if worse else "improved"
    flagged = 0
    for key in cells:
        planted = []
        for r in rows:
            r = dict(r)
            if tuple(r.get(k, "") for k in KEY) == key and r[metric] not in ("", None):
                r[metric] = repr(float(r[metric]) * (1.0 + change))
            planted.append(r)
        path = f"{tmp}/planted.csv"
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
            w.writeheader()
            w.writerows(planted)
        found = [c for c in compare(path) if same_cell(c, key) and c["metric"] == metric]
        verdict = found[0]["verdict"] if found else "not judged"
        q = found[0].get("q_value") if found else None
        flagged += verdict == expect
        print(f"{metric} {change:+.0%} {'/'.join(key[:3])} {key[3]} {key[4]}: {verdict} (q {q if q is None else f'{q:.3g}'})")
    table.append((metric, change, len(cells), flagged))
print()
print("| metric | planted | cells | flagged | fraction |")
print("|---|---:|---:|---:|---:|")
for metric, change, n, flagged in table:
    print(f"| {metric} | {change:+.0%} | {n} | {flagged} | {flagged / n:.2f} |")
PY
