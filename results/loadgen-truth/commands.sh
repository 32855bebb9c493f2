#!/usr/bin/env bash
# The issue 26 before/after figures: runs the quoted cases with the wsbench
# binary given (before: main at 48bfebb, built to /tmp/h26-before/wsbench;
# after: this branch), writing DIR/*.txt. Needs a release build of
# examples/refclient for client-bias.sh.
#
#   results/loadgen-truth/commands.sh WSBENCH_BIN OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
bin="$1"
out="$2"
mkdir -p "$out"
export WSBENCH_BIN="$bin"
scripts/client-bias.sh 5 200 2000 > "$out/client-bias.txt" 2>&1
scripts/wrk-check.sh 5 16 256 > "$out/wrk-check.txt" 2>&1

tmp=$(mktemp -d)
"$bin" serve --listen 127.0.0.1:0 --workers 1 --workload http > "$tmp/serve.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.out" && break; sleep 0.1; done
addr=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$tmp/serve.out")
run() { # run NAME ARGS...: one load, its table, exit status and CSV row
    local name="$1"
    shift
    {
        echo "\$ wsbench load --target $addr $*"
        "$bin" load --target "$addr" "$@" --csv "$tmp/$name.csv" --quiet
        echo "exit status $?"
        python3 - "$tmp/$name.csv" << 'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[-1]
for k in ["status", "error", "sent", "ops", "failed", "duration_s", "throughput_per_s", "offered_per_s", "p99_us", "schedule_slipped"]:
    print(f"{k}={r.get(k, '')}")
print("extras:", " ".join(e for e in r["extras"].split(";") if e.split("=")[0] in ("scheduled", "never_sent", "completed_in_window", "connections", "failed_connections")))
PY
    } > "$out/$name.txt" 2>&1
}
# Exactly 200,000 scheduled: uniform 200k/s for 1 s, 16 connections, 1 client thread.
run vanish --rate 200k --duration 1s --warmup 0s --param arrival=uniform --param connections=16 --param client-threads=1
# Every 2nd request panics: 50 % failed.
run panic-every-2 --rate 1k --duration 1s --warmup 0s --param panic-every=2
# A window too short to measure anything.
run duration-1ns --rate 200 --duration 1ns
# Asked far above what one client thread offers: the table's offered/s.
run asked-2m --rate 2M --duration 1s --warmup 0s --param connections=16 --param client-threads=1
kill "$pid"
wait "$pid" 2> /dev/null
rm -rf "$tmp"
