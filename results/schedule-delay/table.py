#!/usr/bin/env python3
"""The cost table of results/schedule-delay/README.md from a wsbench CSV run
with `--knob sched-delay=on,off --interleave`.

For every cell (scheduler, workers, workload) it pairs the runs of `on`
and `off` by run index (interleaved, so each pair ran back to back) and
prints the median of the paired ratios on/off of:
- CPU per operation (`cpu_us_per_op`);
- time per operation: 1 / `throughput_per_s` for the closed-loop benches;
  for an open-loop workload (its throughput is the offered rate) the
  median request latency `p50_us` instead;
beside the medians of each side and the `on` rows' own schedule delay.

Usage: table.py RESULTS.csv
"""

import csv
import statistics
import sys
from collections import defaultdict

OPEN_LOOP = {"rpc-fanout", "skewed", "timers", "timeouts", "tcp-rpc", "http"}


def num(text):
    return float(text) if text not in ("", None) else None


def time_per_op_us(row):
    if row["workload"] in OPEN_LOOP:
        return num(row["p50_us"])
    t = num(row["throughput_per_s"])
    return 1e6 / t if t else None


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def paired_ratio(on, off):
    ratios = [a / b for a, b in zip(on, off) if a is not None and b]
    return (statistics.median(ratios), len(ratios)) if ratios else (None, 0)


def fmt(v, digits=3):
    return "" if v is None else f"{v:.{digits}f}"


def main(path):
    cells = defaultdict(lambda: {"on": {}, "off": {}})
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok":
                continue
            side = "on" if "sched-delay=on" in row["knobs"] else "off"
            key = (row["scheduler"], int(row["workers"]), row["workload"])
            cells[key][side][int(row["run"])] = row
    print(
        "| scheduler | workers | workload | pairs | cpu/op off µs | cpu/op on µs | **cpu/op on/off** "
        "| time/op off µs | time/op on µs | **time/op on/off** | sched delay p50 / p99 µs (on) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(cells):
        on_rows, off_rows = cells[key]["on"], cells[key]["off"]
        runs = sorted(set(on_rows) & set(off_rows))
        on = [on_rows[r] for r in runs]
        off = [off_rows[r] for r in runs]
        cpu_on = [num(r["cpu_us_per_op"]) for r in on]
        cpu_off = [num(r["cpu_us_per_op"]) for r in off]
        t_on = [time_per_op_us(r) for r in on]
        t_off = [time_per_op_us(r) for r in off]
        cpu_ratio, n = paired_ratio(cpu_on, cpu_off)
        t_ratio, _ = paired_ratio(t_on, t_off)
        delay = f"{fmt(med(num(r['sched_delay_p50_us']) for r in on), 2)} / " \
                f"{fmt(med(num(r['sched_delay_p99_us']) for r in on), 2)}"
        time_label = "p50 " if key[2] in OPEN_LOOP else ""
        print(
            f"| {key[0]} | {key[1]} | {key[2]} | {n} | {fmt(med(cpu_off))} | {fmt(med(cpu_on))} "
            f"| **{fmt(cpu_ratio)}** | {time_label}{fmt(med(t_off))} | {time_label}{fmt(med(t_on))} "
            f"| **{fmt(t_ratio)}** | {delay} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
