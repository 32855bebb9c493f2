#!/usr/bin/env bash
# The spawn cost against its floor (issue 32, item 5): criterion's `tasks`
# bench, case spawn_batch (spawn 1,000 tasks from inside a task, then await
# them all), on steal-half at 1 and 2 workers, current-thread (no
# synchronisation: the floor), tokio at 1 and 2 workers and tokio's
# current-thread; then the cost per task of each and its ratio to
# current-thread's, from criterion's own estimates (median of the samples).
#
#   scripts/spawn-cost.sh [--quick]
#
# A measurement, not a test: quote the ratios of one invocation, with the
# machine's load beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
case "${1:-}" in
    --quick) quick=(--quick) ;;
    "") ;;
    *) echo "error: unknown argument '$1'; usage: scripts/spawn-cost.sh [--quick]" >&2; exit 2 ;;
esac
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cargo bench -p wsbench-schedulers --bench tasks -- "${quick[@]}" '/spawn_batch$' >&2
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/criterion"
python3 - "$dir" <<'PY'
import json, os, sys
root = sys.argv[1]
batch = 1000  # tasks per iteration (BATCH in schedulers/benches/tasks.rs)
rows = ["current-thread", "steal-half-x1", "steal-half-x2", "tokio-current", "tokio-x1", "tokio-x2"]
ns = {}
for r in rows:
    path = os.path.join(root, r, "spawn_batch", "new", "estimates.json")
    if os.path.exists(path):
        ns[r] = json.load(open(path))["median"]["point_estimate"] / batch
floor = ns.get("current-thread")
print(f"{'runtime':<16} {'ns/task':>9} {'/ current-thread':>17}")
for r in rows:
    if r in ns:
        ratio = f"{ns[r] / floor:.2f}x" if floor else "-"
        print(f"{r:<16} {ns[r]:>9.1f} {ratio:>17}")
PY
