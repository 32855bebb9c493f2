#!/usr/bin/env bash
# Client bias of the load generator (issue 26, item 1): p50 of `wsbench
# load` against the p50 of the reference client (workloads/examples/
# refclient.rs: one thread, one keep-alive connection, plain epoll), both
# against one `wsbench serve --workers 1 --workload http` on loopback, at
# each rate. The target is a difference within 10 us.
#
#   [ROUNDS=N] scripts/client-bias.sh [SECONDS] [RATES...]   (default: 5 200 2000)
#
# ROUNDS (default 1) repeats the sweep, the two clients alternating in every
# round, and ends with the medians of each column over the rounds. The
# reference is timed from its own send (ref_lag_us: how late that send was
# after the intended time, its pacing error, left out of its latency);
# load's p50 is from the intended time, so diff_us is all the generator adds.
# A measurement, not a test: the figures depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

secs="${1:-5}"
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(200 2000)
bin=$(wsbench_bin)
cargo build --release -p wsbench-workloads --example refclient >&2
ref="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/examples/refclient"
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

col() { python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(r[0][sys.argv[2]])' "$1" "$2"; }
rounds="${ROUNDS:-1}"
printf '%-6s %-8s %12s %12s %12s %12s %12s\n' round rate ref_p50_us load_p50_us diff_us load_p99_us ref_lag_us
for round in $(seq "$rounds"); do
for r in "${rates[@]}"; do
    ref_out=$("$ref" "$addr" "$r" "$secs")
    ref_p50=$(echo "$ref_out" | sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p')
    ref_lag=$(echo "$ref_out" | sed -n 's/.* send_lag_p50_us=\([0-9.]*\).*/\1/p')
    rm -f "$tmp/load.csv"
    "$bin" load --target "$addr" --rate "$r" --duration "${secs}s" --warmup 1s \
        --param connections=1 --param client-threads=1 --param arrival=uniform --csv "$tmp/load.csv" --quiet \
        > "$tmp/load.out" 2>&1 || true
    load_p50=$(col "$tmp/load.csv" p50_us)
    load_p99=$(col "$tmp/load.csv" p99_us)
    diff=$(python3 -c "print(f'{float(\"$load_p50\") - float(\"$ref_p50\"):.1f}')")
    printf '%-6s %-8s %12s %12s %12s %12s %12s\n' "$round" "$r" "$ref_p50" "$load_p50" "$diff" "$load_p99" "$ref_lag"
    printf '%s %s %s %s %s %s\n' "$r" "$ref_p50" "$load_p50" "$diff" "$load_p99" "$ref_lag" >> "$tmp/rounds"
done
done
[ "$rounds" -gt 1 ] && round_medians "$tmp/rounds" rate ref_p50_us load_p50_us diff_us load_p99_us ref_lag_us
true
