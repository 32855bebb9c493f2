#!/usr/bin/env bash
# Regenerates every figure the README and the book (docs/src/) show, and the
# figures quoted in results/<topic>/README.md, from data committed
# under results/baseline/readme/, with the wsbench of this checkout, and
# prints the commit that recorded each data file (its git_sha column;
# `-dirty`: recorded from a tree with uncommitted changes).
#
#   scripts/readme-figures.sh           redraw the figures in place
#   scripts/readme-figures.sh --check   draw them in a scratch directory and say which
#                                       differ from the committed ones (exit 1 if any)
#   scripts/readme-figures.sh --record  first record every data file below at this commit
#                                       (about 6 minutes on 2 cores), then redraw; refuses a
#                                       tree with uncommitted changes
#   scripts/readme-figures.sh --record-compare
#                                       the same for the compare and history inputs only
#                                       (tiny-ab-*, tiny-now-*: about 3 minutes), which the
#                                       CLI reads only at the current CSV schema version
#
# Figures (where shown: data -> figure):
#   docs/src/tour.md, "A scaling chart": skewed-scaling.csv -> skewed-p99.png (`wsbench plot`), and the
#       skewed p99 bands (median, min..max per cell) the chart's reading refers to
#   docs/src/tour.md, "A compare report": tiny-ab-base.csv, tiny-ab-current.csv (one A/B invocation of one
#       binary, `run --base-bin`) -> compare-tiny-ab.md and its summary line; tiny-now-a.csv,
#       tiny-now-b.csv (two separate invocations) -> compare-tiny.md and its summary line
#   results/cpu-per-request/README.md: cpu-per-request.csv -> the CPU-per-request table's medians,
#       ratios and per-run ranges
#   results/task-align/README.md, results/global-interval/README.md: task-align.csv,
#       global-interval.csv -> the ratios and counts they quote
#   docs/src/comparing.md: tiny-now-{a,b}.csv -> report.png
#       (`wsbench history add`, `wsbench report`, a headless Chromium screenshot;
#       skipped, saying so, without chromium)
#
# Environment: WSBENCH_BIN (a built wsbench; default: cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

check=0 record=0
case "${1:-}" in
    --check) check=1 ;;
    --record) record=1 ;;
    --record-compare) record=2 ;;
    "") ;;
    *) echo "error: unknown argument '$1'; usage: scripts/readme-figures.sh [--check | --record]" >&2; exit 2 ;;
esac

data=results/baseline/readme
if [ "$record" != 0 ] && [ -n "$(git status --porcelain)" ]; then
    echo "error: --record needs a clean tree (the runs record the commit they ran at); uncommitted:" >&2
    git status --short >&2
    exit 2
fi
bin=$(wsbench_bin)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ "$check" = 1 ]; then out=$scratch/figures; mkdir -p "$out"; else out=$data; fi

# The distinct git_sha values of a CSV (the recording commits).
recorded_at() {
    local col
    col=$(head -n 1 "$1" | tr ',' '\n' | grep -nx git_sha | cut -d: -f1)
    tail -n +2 "$1" | cut -d, -f"$col" | sort -u | tr '\n' ' '
}

if [ "$record" != 0 ]; then
    echo "recording at $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    # Everything is recorded into the scratch directory and moved into place
    # at the end: a tracked file rewritten in place would make every later
    # recording's git_sha `-dirty`.
    mkdir -p "$scratch/rec"
    rec() { local file=$1; shift; "$bin" run "$@" --quiet --csv "$scratch/rec/$file" >/dev/null; echo "recorded $file"; }
    if [ "$record" = 1 ]; then
        rec skewed-scaling.csv --sched all --workers 1,2,4 --workload skewed --runs 3
    fi
    rec tiny-ab-current.csv --sched steal-half,steal-one,global,tokio --workers 1,2 --workload yield-many,rpc-fanout \
        --param tasks=50 --param yields=200 --duration 300ms --warmup 50ms --runs 5 \
        --base-bin "$bin" --base-csv "$scratch/rec/tiny-ab-base.csv" --base-sha "$(git rev-parse HEAD)"
    if [ "$record" = 1 ]; then
        rec cpu-per-request.csv --sched steal-half,tokio,smol --workers 2 --workload rpc-fanout,tcp-rpc --interleave \
            --runs 5 --duration 1s --warmup 200ms
        rec task-align.csv --sched steal-half --workers 2 --workload spawn-many-local,spawn-many-remote-idle \
            --knob task-align=none,128 --interleave --runs 5
        rec global-interval.csv --sched steal-half,steal-one --workers 2 --workload spawn-many-remote-busy2 --runs 5
    fi
    for f in a b; do
        rec "tiny-now-$f.csv" --sched steal-half,steal-one,global,tokio --workers 1,2 --workload yield-many,rpc-fanout \
            --param tasks=50 --param yields=200 --duration 300ms --warmup 50ms --runs 5
    done
    mv "$scratch"/rec/*.csv "$data"/
fi

echo "wsbench: $bin (checkout $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' + uncommitted changes'))"
for f in "$data"/skewed-scaling.csv "$data"/tiny-ab-{base,current}.csv "$data"/tiny-now-{a,b}.csv \
    "$data"/cpu-per-request.csv "$data"/task-align.csv "$data"/global-interval.csv; do
    echo "data $f recorded at: $(recorded_at "$f")"
done

# 1. The scaling chart.
"$bin" plot "$data/skewed-scaling.csv" --out "$scratch/plots" >/dev/null
cp "$scratch/plots/skewed-p99.png" "$out/skewed-p99.png"
echo "wrote $out/skewed-p99.png"
echo "skewed p99 (us) per cell: median of the runs, min..max (the chart's band):"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["workload"] == "skewed" && $c["status"] == "ok" {
        k = $c["scheduler"] " x" $c["workers"]; v[k] = v[k] " " $c["p99_us"] }
    END { for (k in v) print k, v[k] }' "$data/skewed-scaling.csv" |
    while read -r sched w values; do
        sorted=$(echo "$values" | tr ' ' '\n' | sort -g | tr '\n' ' ')
        set -- $sorted
        n=$#
        eval "median=\${$(( (n + 1) / 2 ))}"
        eval "max=\${$n}"
        printf '  %-16s %-4s %8.0f  %8.0f..%-8.0f (%d runs)\n' "$sched" "$w" "$median" "$1" "$max" "$n"
    done | sort -b -k2,2 -k1,1

# 2. The compare report (exit 1 means "a regression found": expected here).
rc=0
"$bin" compare "$data/tiny-now-a.csv" "$data/tiny-now-b.csv" --out "$out/compare-tiny.md" --force >"$scratch/compare.txt" || rc=$?
[ "$rc" -le 1 ] || { cat "$scratch/compare.txt" >&2; echo "error: wsbench compare failed ($rc)" >&2; exit 1; }
echo "wrote $out/compare-tiny.md; its summary line (quoted in the book):"
grep -m 1 '^\*\*' "$out/compare-tiny.md" | sed 's/^/  /'

# 2b. The A/B compare report of one binary against itself.
rc=0
"$bin" compare "$data/tiny-ab-base.csv" "$data/tiny-ab-current.csv" --out "$out/compare-tiny-ab.md" --force >"$scratch/compare-ab.txt" || rc=$?
[ "$rc" -le 1 ] || { cat "$scratch/compare-ab.txt" >&2; echo "error: wsbench compare failed ($rc)" >&2; exit 1; }
echo "wrote $out/compare-tiny-ab.md; its summary line (quoted in the book):"
grep -m 1 '^\*\*' "$out/compare-tiny-ab.md" | sed 's/^/  /'

# 2c. The figures results/<topic>/README.md quote from the other data files.
python3 - "$data" <<'EOF'
import csv, statistics, sys
data = sys.argv[1]

def rows(name):
    with open(f"{data}/{name}", newline="") as f:
        return [r for r in csv.DictReader(f) if r["status"] == "ok"]

def extras(r):
    return dict(kv.split("=", 1) for kv in r["extras"].split(";") if kv)

def groups(name, key, value):
    out = {}
    for r in rows(name):
        v = value(r)
        if v not in ("", None):
            out.setdefault(key(r), []).append(float(v))
    return out

print("CPU per request (cpu-per-request.csv): median us, per-run range, ratio to tokio")
cpu = groups("cpu-per-request.csv", lambda r: (r["workload"], r["scheduler"]), lambda r: r["cpu_us_per_op"])
for workload in sorted({w for w, _ in cpu}):
    tokio = statistics.median(cpu[(workload, "tokio")])
    for sched in ("steal-half", "tokio", "smol"):
        v = cpu[(workload, sched)]
        m = statistics.median(v)
        print(f"  {workload:<11} {sched:<11} {m:7.1f}  {min(v):6.1f}..{max(v):<6.1f} {m / tokio:5.2f}x ({len(v)} runs)")
util = groups("cpu-per-request.csv", lambda r: r["workload"], lambda r: r["cpu_util"])
for workload, v in sorted(util.items()):
    print(f"  {workload} cpu_util {min(v):.2f}..{max(v):.2f}")

print("task-align (task-align.csv): median time per iteration, 128 / none")
ta = groups("task-align.csv", lambda r: (r["workload"], r["knobs"]), lambda r: r["mean_us"])
for workload in sorted({w for w, _ in ta}):
    none, b128 = statistics.median(ta[(workload, "task-align=none")]), statistics.median(ta[(workload, "task-align=128")])
    print(f"  {workload:<24} none {none:9.1f} us  128 {b128:9.1f} us  ratio {b128 / none:.2f}x")

print("global-queue interval at the end of each run (global-interval.csv)")
for r in rows("global-interval.csv"):
    e = extras(r)
    print(f"  {r['scheduler']:<11} run {r['run']}: interval {e.get('global_interval_min', '-')}..{e.get('global_interval_max', '-')}, "
          f"time per iteration {float(r['mean_us']):.0f} us")
EOF

# 3. The report screenshot.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "SKIPPED report.png: chromium is not installed (Debian: apt-get install -y chromium)"
else
    # The second run as a run directory, with its comparison to the first.
    mkdir -p "$scratch/run"
    cp "$data/tiny-now-b.csv" "$scratch/run/results.csv"
    "$bin" compare "$data/tiny-now-a.csv" "$data/tiny-now-b.csv" --json "$scratch/run/compare.json" >/dev/null || true
    "$bin" history add --db "$scratch/history.sqlite" "$data/tiny-now-a.csv" >/dev/null
    "$bin" history add --db "$scratch/history.sqlite" "$scratch/run" >/dev/null
    # From inside the scratch directory, so the page names no temporary path.
    (cd "$scratch" && "$bin" report --db history.sqlite --run run --out report.html >/dev/null)
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --disable-background-networking --disable-component-update --disable-sync \
        --window-size=1400,1800 --user-data-dir="$scratch/profile" \
        --screenshot="$out/report.png" "file://$scratch/report.html" 2>/dev/null
    echo "wrote $out/report.png"
fi

if [ "$check" = 1 ]; then
    differ=0
    for f in skewed-p99.png compare-tiny.md compare-tiny-ab.md report.png; do
        [ -f "$out/$f" ] || continue
        if cmp -s "$out/$f" "$data/$f"; then echo "same:   $f"; else echo "differs: $f"; differ=1; fi
    done
    exit $differ
fi
