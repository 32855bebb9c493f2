#!/usr/bin/env bash
# Regenerates every figure the top-level README shows from data committed
# under results/baseline/readme/, with the wsbench of this checkout, and
# prints the commit that recorded each data file (its git_sha column;
# `-dirty`: recorded from a tree with uncommitted changes).
#
#   scripts/readme-figures.sh           redraw the figures in place
#   scripts/readme-figures.sh --check   draw them in a scratch directory and say which
#                                       differ from the committed ones (exit 1 if any)
#   scripts/readme-figures.sh --record  first record the compare example's two runs
#                                       (tiny-now-{a,b}.csv: the tiny nightly matrix,
#                                       about a minute each) at this commit, then redraw;
#                                       refuses a tree with uncommitted changes
#
# Figures (README section: data -> figure):
#   "A scaling chart": all-sched-workers-1-2-4.csv -> skewed-p99.png (`wsbench plot`),
#       and the skewed p99 bands (median, min..max per cell) the README's reading quotes
#   "A compare report": tiny-now-a.csv, tiny-now-b.csv -> compare-tiny.md and its summary
#       line quoted in the README (`wsbench compare`)
#   "The history, change points and the HTML report": tiny-now-{a,b}.csv -> report.png
#       (`wsbench history add`, `wsbench report`, a headless Chromium screenshot;
#       skipped, saying so, without chromium)
# The chart's CSV is schema 1, which `wsbench plot` still reads; `compare` and
# `history` read only the current schema, hence the re-recorded tiny-now runs (the
# schema-1 tiny-same-{a,b,c,d}.csv stay as harness/tests/compare_noise.rs's data).
# Re-recording the chart's data is a long measurement (the README gives its command).
#
# Environment: WSBENCH_BIN (a built wsbench; default: cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

check=0 record=0
case "${1:-}" in
    --check) check=1 ;;
    --record) record=1 ;;
    "") ;;
    *) echo "error: unknown argument '$1'; usage: scripts/readme-figures.sh [--check | --record]" >&2; exit 2 ;;
esac

data=results/baseline/readme
if [ "$record" = 1 ] && [ -n "$(git status --porcelain)" ]; then
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

if [ "$record" = 1 ]; then
    for f in a b; do
        rm -f "$data/tiny-now-$f.csv"
        "$bin" run --sched steal-half,steal-one,global,tokio --workers 1,2 --workload yield-many,rpc-fanout \
            --param tasks=50 --param yields=200 --duration 300ms --warmup 50ms --runs 5 --quiet \
            --csv "$data/tiny-now-$f.csv" >/dev/null
        echo "recorded $data/tiny-now-$f.csv"
    done
fi

echo "wsbench: $bin (checkout $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' + uncommitted changes'))"
for f in "$data"/all-sched-workers-1-2-4.csv "$data"/tiny-now-{a,b}.csv; do
    echo "data $f recorded at: $(recorded_at "$f")"
done

# 1. The scaling chart.
"$bin" plot "$data/all-sched-workers-1-2-4.csv" --out "$scratch/plots" >/dev/null
cp "$scratch/plots/skewed-p99.png" "$out/skewed-p99.png"
echo "wrote $out/skewed-p99.png"
echo "skewed p99 (us) per cell: median of the runs, min..max (the chart's band):"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["workload"] == "skewed" && $c["status"] == "ok" {
        k = $c["scheduler"] " x" $c["workers"]; v[k] = v[k] " " $c["p99_us"] }
    END { for (k in v) print k, v[k] }' "$data/all-sched-workers-1-2-4.csv" |
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
"$bin" compare "$data/tiny-now-a.csv" "$data/tiny-now-b.csv" --out "$out/compare-tiny.md" >"$scratch/compare.txt" || rc=$?
[ "$rc" -le 1 ] || { cat "$scratch/compare.txt" >&2; echo "error: wsbench compare failed ($rc)" >&2; exit 1; }
echo "wrote $out/compare-tiny.md; its summary line (quoted in the README):"
grep -m 1 '^\*\*' "$out/compare-tiny.md" | sed 's/^/  /'

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
    for f in skewed-p99.png compare-tiny.md report.png; do
        [ -f "$out/$f" ] || continue
        if cmp -s "$out/$f" "$data/$f"; then echo "same:   $f"; else echo "differs: $f"; differ=1; fi
    done
    exit $differ
fi
