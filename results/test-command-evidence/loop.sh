#!/usr/bin/env bash
# Evidence for issue 25 item 4: the README's test command on a clean clone,
# 10 passes in a row (the first cold), then 3 beside two `yes` hogs.
cd /work/ev/clone
for i in 1 2 3 4 5 6 7 8 9 10; do
  s=$(date +%s); cargo test --workspace --release > /work/ev/pass$i.log 2>&1; rc=$?
  e=$(date +%s); echo "pass $i rc=$rc secs=$((e-s)) load=$(cut -d' ' -f1-3 /proc/loadavg) $(grep -c '^test result: ok' /work/ev/pass$i.log) ok-suites $(grep -o 'test result: FAILED' /work/ev/pass$i.log | wc -l) failed-suites" >> /work/ev/summary.txt
done
for i in 1 2 3; do
  yes > /dev/null & h1=$!; yes > /dev/null & h2=$!
  s=$(date +%s); cargo test --workspace --release > /work/ev/hog$i.log 2>&1; rc=$?
  e=$(date +%s); kill $h1 $h2
  echo "hog $i rc=$rc secs=$((e-s)) load=$(cut -d' ' -f1-3 /proc/loadavg) $(grep -c '^test result: ok' /work/ev/hog$i.log) ok-suites $(grep -o 'test result: FAILED' /work/ev/hog$i.log | wc -l) failed-suites" >> /work/ev/summary.txt
done
echo done >> /work/ev/summary.txt
