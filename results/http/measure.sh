#!/bin/bash
# Issue 16 item 3 measurements; run in D (default /tmp/i16m) with W=path to wsbench.
set -u
W=${W:-/tmp/i16m/wsbench}
cd ${D:-/tmp/i16m}
log() { echo "=== $* ==="; echo "uptime: $(uptime)"; }
m1() {
  for p in h1 h2; do
    log "M1 $p: every runtime x2 at 2k/s interleaved"
    $W run --sched all --workers 2 --workload http --param proto=$p --rate 2k --interleave --runs 3 \
      --duration 2s --warmup 500ms --csv m1-$p.csv --json m1-$p.json -q
    echo "uptime after: $(uptime)"
  done
}
m2() {
  log "M2: capacity at p99<5ms, rate sweep"
  $W run --sched steal-half,tokio,smol,thread-per-core --workers 2 --workload http --rate 2k..=32k:x2 \
    --slo 'p99<5ms' --interleave --runs 1 --duration 1s --warmup 300ms --csv m2.csv -q
  echo "uptime after: $(uptime)"
}
serve_bg() { # args: extra serve args; sets ADDR, SPID
  local i
  $W serve --listen 127.0.0.1:0 --sched steal-half --workers 2 --workload http --duration 600s "$@" > serve.out 2>&1 &
  SPID=$!
  for i in $(seq 50); do ADDR=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' serve.out); [ -n "$ADDR" ] && break; sleep 0.1; done
}
m3() {
  for p in h1 h2; do
    serve_bg --param service-us=0 --param proto=$p
    log "M3 $p: client ceiling, 1 client thread, no-op handler, serve at $ADDR"
    for r in 5k 10k 20k 40k; do
      python3 - "$W" "$ADDR" "$p" "$r" <<'PY'
import resource, subprocess, sys, csv
w, addr, p, r = sys.argv[1:]
out = f"m3-{p}-{r}.csv"
args = [w, "load", "--target", addr, "--workload", "http", "--param", f"proto={p}", "--param", "service-us=0",
        "--param", "client-threads=1", "--param", "connections=64", "--rate", r, "--duration", "2s", "--warmup", "300ms",
        "--csv", out, "--quiet"]
res = subprocess.run(args, capture_output=True, text=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
row = list(csv.DictReader(open(out)))[0]
ops, sent = int(row["ops"] or 0), int(row["sent"] or 0)
cpu = u.ru_utime + u.ru_stime
print(f"{p} rate {r}: throughput {row['throughput_per_s']}/s ops {ops} sent {sent} failed {row['failed']} p99 {row['p99_us']}us "
      f"slipped {row['schedule_slipped']} client-cpu {cpu:.3f}s = {cpu*1e6/max(ops,1):.1f} us/request (whole process incl. connect+warm-up)")
PY
    done
    kill -TERM $SPID; wait $SPID; tail -3 serve.out
    echo "uptime after: $(uptime)"
  done
}
m4() {
  ulimit -n; ulimit -Hn
  for p in h1 h2; do
    serve_bg --param proto=$p
    log "M4 $p: 10000 connections, 10 client threads, serve at $ADDR"
    $W load --target $ADDR --workload http --param proto=$p --param connections=10000 --param client-threads=10 \
      --rate 5k --duration 3s --warmup 1s --csv m4-$p.csv --quiet
    echo "load exit $?"
    kill -TERM $SPID; wait $SPID; tail -4 serve.out
    echo "uptime after: $(uptime)"
  done
}
m5() { # m4 after the listen-backlog fix: 3 runs per protocol, with the kernel's counters
  ulimit -n
  for run in 1 2 3; do
    for p in h2 h1; do
      serve_bg --param proto=$p
      log "M5 $p run $run: 10000 connections, 10 client threads, serve at $ADDR"
      nstat -n
      $W load --target $ADDR --workload http --param proto=$p --param connections=10000 --param client-threads=10 \
        --rate 5k --duration 3s --warmup 1s --csv m5-$p-$run.csv --quiet | grep "run 0"
      echo "load exit ${PIPESTATUS[0]}"
      python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1])))[0]; print(r['extras'].split(';')[:2], 'sent', r['sent'], 'ops', r['ops'], 'failed', r['failed'], 'throughput', r['throughput_per_s'], 'p99_us', r['p99_us'])" m5-$p-$run.csv
      nstat | grep -E "ListenOverflows|Syncookies|TcpOutRsts|EstabResets" || echo "(no listen overflows, SYN cookies or resets)"
      kill -TERM $SPID; wait $SPID; grep "listen backlog" serve.out
      echo "uptime after: $(uptime)"
    done
  done
}
"$@"
