# Medians per cell of two wsbench CSVs (side pool off / on), as markdown:
#   python3 table.py LABEL_OFF OFF.csv LABEL_ON ON.csv
import csv, statistics as st, sys
def load(p):
    return [r for r in csv.DictReader(open(p))]
print("| side pool | cpus | scheduler | workers | runs ok | throughput/s | p50 µs | p99 µs | CPU/req µs | throttled ms per s | throttled periods | tokio default workers |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for side, p in [(sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])]:
    rows = load(p)
    cells = {}
    for r in rows:
        cells.setdefault((r["cpus"], r["scheduler"], int(r["workers"])), []).append(r)
    order = ["steal-half", "tokio", "thread-per-core"]
    for k in sorted(cells, key=lambda k: (float(k[0]), order.index(k[1]), k[2])):
        rs = cells[k]; ok = [r for r in rs if r["status"] == "ok"]
        def med(c, scale=1.0):
            v = [float(r[c]) * scale for r in ok if r[c] not in ("", None)]
            return st.median(v) if v else None
        def fmt(v, d=0):
            return "" if v is None else f"{v:,.{d}f}"
        thr_per_s = [float(r["throttled_ms"]) / float(r["duration_s"]) for r in ok if r["throttled_ms"]]
        print(f"| {side} | {k[0]} | {k[1]} | {k[2]} | {len(ok)}/{len(rs)} | {fmt(med('throughput_per_s'))} | {fmt(med('p50_us'))} | {fmt(med('p99_us'))} | {fmt(med('cpu_us_per_op'),1)} | {fmt(st.median(thr_per_s) if thr_per_s else None,1)} | {fmt(med('nr_throttled'))} of {fmt(med('nr_periods'))} | {ok[0]['tokio_default_workers'] if ok else ''} |")
