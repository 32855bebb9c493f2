#!/usr/bin/env bash
# Capacity check of the load generator against wrk (issue 26, item 2):
# `wsbench serve --workers 1 --workload http` on loopback, then wrk and
# `wsbench load` (one client thread, asked 200k/s: far above what either
# does here, so it runs flat out) at each connection count, one after the other
# against the same server; prints both throughputs and load/wrk.
#
#   [ROUNDS=N] scripts/wrk-check.sh [SECONDS] [CONNECTIONS...]   (default: 5 16 256)
#
# ROUNDS (default 1) repeats the whole sweep, wrk and load alternating in
# every round, and ends with the median of each column and of the per-round
# ratios: on a shared VM single runs spread by tens of percent, so quote the
# medians of one interleaved invocation.
# wrk is the Debian package (installed with apt-get when missing). The
# wsbench figure is throughput_per_s: completions inside the measured
# window / the window (the drain is not in it). A measurement, not a test:
# the figures depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

secs="${1:-5}"
shift || true
conns=("$@")
[ ${#conns[@]} -gt 0 ] || conns=(16 256)
command -v wrk > /dev/null || apt-get install -y wrk > /dev/null
bin=$(wsbench_bin)
tmp=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 --workers 1 --workload http > "$tmp/serve.out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.out" && break; sleep 0.1; done
addr=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$tmp/serve.out")
[ -n "$addr" ] || { echo "serve did not start:" >&2; cat "$tmp/serve.out" >&2; exit 1; }
echo "server: $bin serve --workers 1 --workload http on $addr"

col() { # col CSV NAME: the first row's value of column NAME
    python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(r[0][sys.argv[2]])' "$1" "$2"
}
rounds="${ROUNDS:-1}"
printf '%-6s %-12s %14s %14s %8s\n' round connections wrk_req_per_s load_req_per_s ratio
for round in $(seq "$rounds"); do
for c in "${conns[@]}"; do
    wrk_rps=$(wrk -t1 -c"$c" -d"${secs}s" "http://$addr/" | sed -n 's/^Requests\/sec: *//p')
    rm -f "$tmp/load.csv"
    "$bin" load --target "$addr" --rate 200k --duration "${secs}s" --warmup 0s \
        --param connections="$c" --param client-threads=1 --csv "$tmp/load.csv" --quiet > "$tmp/load.out" 2>&1 || true
    load_rps=$(col "$tmp/load.csv" throughput_per_s)
    ratio=$(python3 -c "print(f'{float(\"$load_rps\") / float(\"$wrk_rps\"):.2f}')")
    printf '%-6s %-12s %14.0f %14.0f %8s\n' "$round" "$c" "$wrk_rps" "$load_rps" "$ratio"
    printf '%s %s %s %s\n' "$c" "$wrk_rps" "$load_rps" "$ratio" >> "$tmp/rounds"
done
done
[ "$rounds" -gt 1 ] && round_medians "$tmp/rounds" connections wrk_req_per_s load_req_per_s ratio+range
true
