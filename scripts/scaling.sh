#!/usr/bin/env bash
# Many-core scaling preset for wsbench.
#
#   scripts/scaling.sh           the default suite, every scheduler, workers 1, 2, 4, ...
#                                up to the core count (and the core count itself),
#                                tokio as the ratio baseline, CPU columns included
#   scripts/scaling.sh --tiny    the same pipeline on a tiny matrix (a smoke test; also
#                                WSBENCH_TINY=1)
#
# Writes results/scaling/<host>/ (--tiny: results/scaling-tiny/<host>/, ignored by git;
# WSBENCH_OUT overrides):
#   results.csv  results.json  table.txt  doctor.txt  plots/*.svg|png  (throughput,
#   p99 and CPU per request against workers, per workload)
# doctor.txt is `wsbench doctor` for the planned worker counts; the same findings
# are in results.json's environment. Commit the directory to publish a machine's
# scaling curves (results/scaling/ is not ignored by git).
#
# Budget: 12 workloads x (6 multi-worker schedulers x log2(cores)+1 worker counts +
# 2 single-worker ones) cells x 3 runs of 50 ms warm-up + 200 ms, interleaved; on 16
# cores 384 cells, about 7-8 minutes. WSBENCH_SCALING_RUNS, _DURATION, _WARMUP and
# _WORKLOADS change it. Environment: WSBENCH_BIN (a built wsbench; default: cargo
# build --release), WSBENCH_OUT.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/common.sh
logical_cpus() { getconf _NPROCESSORS_ONLN 2>/dev/null || nproc; }

tiny=${WSBENCH_TINY:-0}
case "${1:-}" in
    --tiny) tiny=1 ;;
    "") ;;
    *) echo "error: unknown argument '$1'; usage: scripts/scaling.sh [--tiny]" >&2; exit 2 ;;
esac

cores=$(logical_cpus)
if [ "$tiny" = 1 ]; then
    workers="1,2"
    matrix=(--sched steal-half,tokio,smol --workers "$workers" --workload yield-many,rpc-fanout
            --param tasks=20 --param yields=50 --duration 100ms --warmup 20ms --runs 1)
else
    workers="1..=${cores}:pow2,${cores}"
    matrix=(--sched all --workers "$workers" --workload "${WSBENCH_SCALING_WORKLOADS:-default}"
            --duration "${WSBENCH_SCALING_DURATION:-200ms}" --warmup "${WSBENCH_SCALING_WARMUP:-50ms}"
            --runs "${WSBENCH_SCALING_RUNS:-3}")
fi

if [ "$tiny" = 1 ]; then
    out=${WSBENCH_OUT:-results/scaling-tiny/$(uname -n | slug)}  # ignored by git
else
    out=${WSBENCH_OUT:-results/scaling/$(uname -n | slug)}
fi
mkdir -p "$out"

bin=$(wsbench_bin)

echo "scaling: ${cores} logical CPUs, workers ${workers}, output in $out" >&2
"$bin" doctor --workers "$workers" | tee "$out/doctor.txt" >&2
rm -f "$out/results.csv"
"$bin" run "${matrix[@]}" --interleave --baseline-sched tokio --quiet \
    --csv "$out/results.csv" --json "$out/results.json" | tee "$out/table.txt"
rm -rf "$out/plots"
"$bin" plot "$out/results.csv" --out "$out/plots" > "$out/plots.txt"
echo "scaling: wrote $out (results.csv, results.json, table.txt, doctor.txt, plots/)" >&2
