#!/usr/bin/env bash
# Measurements of how this machine behaves (issue 25): claims that once
# were tests but depend on the machine, so they are not in the
# test command (`cargo test --workspace --release`):
#   cpu-known-answer      CPU per request of calibrated spin on steal-half,
#                         tokio and smol, against the margins the old test
#                         stated, beside what the spin cost on this thread's
#                         own CPU clock (its drift from the calibration)
#   idle-backoff-vs-park  idle=backoff vs idle=park CPU per request and
#                         involuntary switches under light load
#   fixed-service-p50     p50 latency / service time near S = 2 ms at low load
# Each prints its figures and whether its claim held, and appends one CSV
# row per figure (measurement,subject,figure,value,unit,claim_held).
# The instruments themselves (spin drift over ~10 s, the CPU meter against
# the thread clock, park/unpark against sched_yield, timer lateness) are
# checked by `wsbench doctor --calibrate`.
#
#   scripts/measure.sh [--gate] [--only NAME] [OUT.csv]
#
# OUT.csv defaults to results/measure/<UTC date and time>.csv. --gate
# (scripts/nightly.sh on its dedicated machine) exits 1 when a claim did not
# hold there; without it the figures are the result and the exit status 0.
# Takes about a minute on 2 cores after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gate) args+=(--gate); shift ;;
        --only) args+=(--only "${2:?--only needs a measurement name}"); shift 2 ;;
        -*) echo "error: unknown option '$1'; usage: scripts/measure.sh [--gate] [--only NAME] [OUT.csv]" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
out=${out:-results/measure/$(date -u +%Y-%m-%dT%H%M%SZ).csv}
mkdir -p "$(dirname "$out")"
echo "measure: figures in $out" >&2
cargo run --quiet --release -p wsbench-workloads --example measure -- --csv "$out" "${args[@]}"
