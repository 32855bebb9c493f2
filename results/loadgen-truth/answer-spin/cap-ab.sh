#!/usr/bin/env bash
# interleaved capacity A/B: wrk, before, spin
set -u
secs=${SECS:-5}; rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
/tmp/ab/wsbench-before serve --listen 127.0.0.1:0 --workers 1 --workload http > $tmp/serve.out 2>&1 &
sp=$!
for _ in $(seq 100); do grep -q '^listening on' $tmp/serve.out && break; sleep 0.1; done
addr=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' $tmp/serve.out)
col() { python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(r[0][sys.argv[2]])' "$1" "$2"; }
for r in $(seq $rounds); do for c in ${CONNS:-16 256}; do
  w=$(wrk -t1 -c$c -d${secs}s http://$addr/ | sed -n 's/^Requests\/sec: *//p')
  out="$r $c wrk=$w"
  for b in ${BINS:-before spin}; do rm -f $tmp/l.csv; /tmp/ab/wsbench-$b load --target $addr --rate 200k --duration ${secs}s --warmup 0s --param connections=$c --param client-threads=1 --csv $tmp/l.csv --quiet > /dev/null 2>&1; out="$out $b=$(col $tmp/l.csv throughput_per_s)"; done
  echo "$out"
done; done
kill $sp
