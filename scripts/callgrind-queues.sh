#!/usr/bin/env bash
# Instruction counts (valgrind callgrind) of the steal-half local queue's
# and the bwos block queue's single-threaded hot paths, beside
# crossbeam-deque's equivalents.
#
# Usage: scripts/callgrind-queues.sh [path/to/schedulers/Cargo.toml]
# Prints CSV: case,instructions,tasks,instructions_per_task
#
# Each case runs once in the `queues` bench binary (`--callgrind-case NAME`);
# --toggle-collect counts only the case's `hot_*` function, not the set-up.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest=${1:-$root/schedulers/Cargo.toml}
command -v valgrind >/dev/null || { echo "error: valgrind not found" >&2; exit 1; }

# Tasks each case moves: 1,000 pushed and popped; half of a full 256 ring
# (one bwos block); one.
push_pop_tasks=1000
half_of_ring=128
# What one bwos steal takes from a full queue: one block.
bwos_block=32

exe=$(cargo bench --manifest-path "$manifest" --bench queues --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | grep '/queues-' | tail -n 1 | cut -d'"' -f4)
[ -x "$exe" ] || { echo "error: could not find the queues bench binary" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "case,instructions,tasks,instructions_per_task"
while read -r case function tasks; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$case.out" \
        --toggle-collect="*$function" "$exe" --callgrind-case "$case" 2>"$out/$case.log" >/dev/null
    instructions=$(grep -o 'Collected : [0-9]*' "$out/$case.log" | grep -o '[0-9]*$')
    [ -n "$instructions" ] || { echo "error: no count for $case, see valgrind's log:" >&2; cat "$out/$case.log" >&2; exit 1; }
    awk -v c="$case" -v i="$instructions" -v t="$tasks" 'BEGIN { printf "%s,%d,%d,%.1f\n", c, i, t, i / t }'
done <<CASES
ours_push_pop hot_ours_push_pop $push_pop_tasks
crossbeam_fifo_push_pop hot_crossbeam_push_pop $push_pop_tasks
crossbeam_lifo_push_pop hot_crossbeam_push_pop $push_pop_tasks
ours_steal_half hot_ours_steal $half_of_ring
crossbeam_steal_half hot_crossbeam_steal_half $half_of_ring
ours_steal_one hot_ours_steal 1
crossbeam_steal_one hot_crossbeam_steal_one 1
bwos_push_pop hot_bwos_push_pop $push_pop_tasks
bwos_steal_block hot_bwos_steal $bwos_block
bwos_steal_one hot_bwos_steal 1
CASES
