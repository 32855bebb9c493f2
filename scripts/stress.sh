#!/usr/bin/env bash
# Runs the stress suite (schedulers/tests/stress.rs) on every policy:
# producers, stealers, foreign wakes, aborts, exactly-once accounting, drop
# counters and an RSS bound.
#
# Usage: scripts/stress.sh [full|short]
#   full  (default): WSBENCH_STRESS_SECS=300 total, 4,000 roots per round;
#   short: the CI form, the test's defaults (5 s total, 1,000 roots).
# WSBENCH_STRESS_SECS / WSBENCH_STRESS_ROOTS / WSBENCH_STRESS_WORKERS set in
# the environment override either form. CARGO_TARGET_DIR is honoured.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
form=${1:-full}

case $form in
    full)
        export WSBENCH_STRESS_SECS=${WSBENCH_STRESS_SECS:-300}
        export WSBENCH_STRESS_ROOTS=${WSBENCH_STRESS_ROOTS:-4000}
        ;;
    short) ;;
    *) echo "usage: $0 [full|short]" >&2; exit 2 ;;
esac

echo "stress ($form): WSBENCH_STRESS_SECS=${WSBENCH_STRESS_SECS:-default} WSBENCH_STRESS_ROOTS=${WSBENCH_STRESS_ROOTS:-default} WSBENCH_STRESS_WORKERS=${WSBENCH_STRESS_WORKERS:-default}"
# One test thread: the tests serialise on a lock anyway (RSS is process-wide).
exec cargo test --release --manifest-path "$root/Cargo.toml" -p wsbench-schedulers --test stress \
    -- --ignored --nocapture --test-threads=1
