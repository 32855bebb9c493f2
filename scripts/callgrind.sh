#!/usr/bin/env bash
# Deterministic instruction counts (valgrind callgrind) of the single-threaded
# hot paths: the steal-half ring against crossbeam-deque
# (scripts/callgrind-queues.sh), the timer wheel, and task spawn / poll /
# complete, yield and waker clone on the current-thread runtime.
#
# Usage: scripts/callgrind.sh [OPS]     (OPS per case, default 10000)
# Prints CSV: case,instructions,ops,instructions_per_op
#
# The wheel and task cases run in the `hotpaths` example, which warms each
# case up and then wraps the measured loop in callgrind's START/STOP
# instrumentation client requests; with --instr-atstart=no only that loop
# counts, on every thread (the task cases run on the runtime's worker
# thread). The counts are exact and repeat run to run (checked: identical
# on reruns, linear in OPS), so a change in them is a change in the code.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ops=${1:-10000}
command -v valgrind >/dev/null || { echo "error: valgrind not found" >&2; exit 1; }
# task_spawn_batch spawns in batches of 100.
[ $((ops % 100)) -eq 0 ] || { echo "error: OPS must be a multiple of 100" >&2; exit 2; }

"$root/scripts/callgrind-queues.sh" "$root/schedulers/Cargo.toml" | sed 's/,tasks,instructions_per_task$/,ops,instructions_per_op/'

exe=$(cargo build --manifest-path "$root/Cargo.toml" --release -p wsbench-schedulers --example hotpaths \
        --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | grep '/hotpaths$' | tail -n 1)
[ -x "$exe" ] || { echo "error: could not build the hotpaths example" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for case in $("$exe" list); do
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/$case.out" \
        "$exe" "$case" "$ops" 2>"$out/$case.log" >/dev/null
    instructions=$(grep -o 'Collected : [0-9]*' "$out/$case.log" | grep -o '[0-9]*$')
    [ -n "$instructions" ] || { echo "error: no count for $case, see valgrind's log:" >&2; cat "$out/$case.log" >&2; exit 1; }
    awk -v c="$case" -v i="$instructions" -v n="$ops" 'BEGIN { printf "%s,%d,%d,%.1f\n", c, i, n, i / n }'
done
