#!/usr/bin/env bash
# Issue 25 item 4: the README's test command beside two `yes` hogs, 3 times.
cd /work/ev/clone2
cargo test --workspace --release --no-run > /work/ev/hogbuild.log 2>&1
for i in 1 2 3; do
  yes > /dev/null & h1=$!; yes > /dev/null & h2=$!
  s=$(date +%s); cargo test --workspace --release > /work/ev/hogB$i.log 2>&1; rc=$?
  e=$(date +%s); kill $h1 $h2
  echo "hogB $i rc=$rc secs=$((e-s)) load=$(cut -d' ' -f1-3 /proc/loadavg) $(grep -c '^test result: ok' /work/ev/hogB$i.log) ok-suites $(grep -o 'test result: FAILED' /work/ev/hogB$i.log | wc -l) failed-suites" >> /work/ev/summary2.txt
done
echo done >> /work/ev/summary2.txt
