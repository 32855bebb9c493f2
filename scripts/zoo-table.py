#!/usr/bin/env python3
"""The pathology zoo's signatures as markdown tables, from wsbench CSVs.

Usage: scripts/zoo-table.py RESULTS.csv [MORE.csv ...]

One table per workload: per cell (scheduler, knobs, params as given), the
median of each signature figure over the cell's ok runs, with the runs'
min..max. A figure is a CSV column (p99_us, cpu_us_per_op, a counter) or
an `extras` entry; a cell where the runtime did not measure it is blank.
Reads CSV only (never a printed table).
"""

import csv
import statistics
import sys
from collections import OrderedDict

SIGNATURES = OrderedDict([
    ("lifo-starvation", ["bystander_wait_p99_us", "bystander_wait_max_us", "lifo_hits_per_poll"]),
    ("idle-burst", ["overhead_cpu_us_per_burst", "wakeups_per_op", "p50_us"]),
    ("task-churn", ["ns_per_task", "task_registry_contended"]),
    ("timer-churn", ["cpu_us_per_op", "timer_lock_contended", "cross_thread_cancels", "timer_remote_cancels"]),
    ("blocking-storm", ["ns_per_task", "spawn_call_ns", "blocking_lock_contended"]),
    ("accept-storm", ["imbalance_index", "workers_serving", "p99_us", "throughput_per_s"]),
])


def extras(row):
    out = {}
    for part in filter(None, row.get("extras", "").split(";")):
        name, _, value = part.partition("=")
        out[name] = value
    return out


def value(row, name):
    """The figure `name` of a row: its column, else its extras entry; None when blank."""
    text = row.get(name, "")
    if text == "":
        text = extras(row).get(name, "")
    return float(text) if text not in ("", "NaN", "nan") else None


def fmt(v):
    if v == 0 or abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cell(values):
    if not values or any(v is None for v in values):
        return ""
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}..{fmt(max(values))})"


def main(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(r for r in csv.DictReader(f) if r.get("status", "ok") == "ok")
    for workload, figures in SIGNATURES.items():
        cells = OrderedDict()
        for r in rows:
            if r["workload"] != workload:
                continue
            key = (r["workers"], r["scheduler"], r.get("knobs", ""), r.get("params", ""))
            cells.setdefault(key, []).append(r)
        if not cells:
            continue
        print(f"\n#### {workload}\n")
        print("| workers | scheduler | knobs | params | runs | " + " | ".join(f"`{f}`" for f in figures) + " |")
        print("|" + "---|" * (5 + len(figures)))
        for (workers, sched, knobs, params), runs in cells.items():
            figs = [cell([value(r, f) for r in runs]) for f in figures]
            print(f"| {workers} | {sched} | {knobs} | {params} | {len(runs)} | " + " | ".join(figs) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/zoo-table.py RESULTS.csv [MORE.csv ...]")
    main(sys.argv[1:])
