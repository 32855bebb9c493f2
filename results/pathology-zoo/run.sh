#!/usr/bin/env bash
# The pathology zoo at 2 workers on every runtime, the blocking storm
# against its spawner count, and the interleaved A/Bs of issue 30, into
# this folder (CSV per invocation, uptime before and after each). Run from
# the repository root after `cargo build --release`; then
# `scripts/zoo-table.py results/pathology-zoo/*.csv` prints the tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/pathology-zoo
bin=target/release/wsbench
common=(--workers 2 --interleave --duration 500ms --warmup 100ms --quiet)

run() {
    local name=$1
    shift
    echo "== $name: $(uptime)" | tee -a "$out/uptime.txt"
    nice -n 10 "$bin" "$@" "${common[@]}" --csv "$out/$name.csv" >"$out/$name.txt"
}

rm -f "$out"/*.csv "$out"/*.txt
git rev-parse --short HEAD >"$out/commit.txt"
run zoo-2w --sched all --workload zoo --runs 3
for s in 1 4 16; do
    run "blocking-storm-s$s" --sched all --workload blocking-storm --param "spawners=$s" --runs 3
done
run ab-lifo --sched steal-half --workload lifo-starvation --knob lifo=on,off --runs 10
run ab-idle --sched steal-half --workload idle-burst --knob idle=park,backoff --runs 10
run ab-timer --sched steal-half --workload timer-churn --knob timer=shared,per-worker --runs 5
echo "== done: $(uptime)" | tee -a "$out/uptime.txt"
