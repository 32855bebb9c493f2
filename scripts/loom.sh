#!/usr/bin/env bash
# Runs every loom model of the schedulers crate, groups in parallel, and
# prints each group's wall time.
#
# Usage: scripts/loom.sh [GROUP_FILTER...]
#   With no argument every group runs; otherwise only the groups whose
#   filter is given (e.g. `scripts/loom.sh loom_tests::inject`).
# Environment:
#   LOOM_MAX_PREEMPTIONS  preemption bound (default 2; each model's doc says
#                         why its bound suffices)
#   LOOM_JOBS             groups run at once (default: the number of CPUs)
#   LOOM_INCLUDE_IGNORED  1: also run models marked #[ignore = "bug: ..."]
#                         (known runtime bugs awaiting a fix)
#   CARGO_TARGET_DIR      build directory (default target/loom: a loom build
#                         must not share the normal one, RUSTFLAGS differ)
#
# Every test whose name contains "loom" must belong to a group; a new model
# outside them fails the script, so it cannot silently go unrun.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS:-2}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/loom}
jobs=${LOOM_JOBS:-$(nproc)}
ignored=()
[ "${LOOM_INCLUDE_IGNORED:-0}" = 1 ] && ignored=(--include-ignored)

groups=(
    loom_tests::task::
    loom_tests::block_on_wake::
    loom_tests::idle::
    loom_tests::idle_race::
    loom_tests::lifo::
    loom_tests::lifo_steal::
    loom_tests::inject::
    loom_tests::handoff::
    loom_tests::inject_close::
    loom_tests::join_waker::
    loom_tests::owned::
    loom_tests::shutdown_race::
    loom_tests::timer::
    loom_tests::timer_remote_cancel::
    loom_tests::blocking::
    policies::steal_half::queue::loom_tests::
    policies::bwos::queue::loom_tests::
    driver::io::loom_tests::
)
if [ $# -gt 0 ]; then
    groups=("$@")
fi

echo "loom: building (RUSTFLAGS=--cfg loom, CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
exe=$(RUSTFLAGS="--cfg loom" cargo test --manifest-path "$root/Cargo.toml" -p wsbench-schedulers \
        --release --lib --no-run --message-format=json \
    | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | tail -n 1)
[ -x "$exe" ] || { echo "error: could not find the loom test binary" >&2; exit 1; }

# Every loom test must be in a group (checked only for the full set).
if [ $# -eq 0 ]; then
    ungrouped=$("$exe" --list 2>/dev/null | sed -n 's/: test$//p' | grep loom | while read -r t; do
        hit=0
        for g in "${groups[@]}"; do
            case $t in "$g"*) hit=1 ;; esac
        done
        [ $hit -eq 1 ] || echo "$t"
    done)
    if [ -n "$ungrouped" ]; then
        echo "error: loom tests in no group of scripts/loom.sh:" >&2
        echo "$ungrouped" >&2
        exit 1
    fi
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_group() {
    local g=$1 log=$2 start end rc
    start=$(date +%s.%N)
    rc=0
    # One test thread per group: groups already run in parallel.
    "$exe" "$g" --test-threads=1 "${ignored[@]}" >"$log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    local tests
    tests=$(grep -o '[0-9]* passed; [0-9]* failed; [0-9]* ignored' "$log" || echo "no result")
    printf '%-34s %8.1f s  %s%s\n' "$g" "$(echo "$end - $start" | bc)" "$tests" "$([ $rc -eq 0 ] || echo '  FAILED')"
    echo $rc >"$log.rc"
}

echo "loom: LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS, $jobs groups at once"
printf '%-34s %10s  %s\n' group wall tests
for g in "${groups[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n || true
    done
    run_group "$g" "$logs/${g//:/_}.log" &
done
wait
failed=0
for g in "${groups[@]}"; do
    log="$logs/${g//:/_}.log"
    if [ "$(cat "$log.rc" 2>/dev/null || echo 1)" != 0 ]; then
        failed=1
        echo "---- $g output (tail) ----" >&2
        tail -n 40 "$log" >&2
    fi
done
[ $failed -eq 0 ] && echo "loom: all groups passed" || { echo "loom: FAILED" >&2; exit 1; }
