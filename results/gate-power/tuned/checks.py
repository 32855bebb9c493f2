# Three checks on stored A/B invocations of identical code (each DIR with
# base.csv and results.csv), asked because false alarms appeared:
#  1. time structure: the lag-1..4 autocorrelation of every run's log p99
#     (less its cell's median) in the order the runs were made;
#  2. an order effect: per cell, the second run of each pair against the
#     first (median log ratio; Wilcoxon signed-rank p < 0.05 by chance in
#     about 1 cell of 18);
#  3. dependence between pairs: per cell, the lag-1 autocorrelation of the
#     pairs' log ratios current/base (about -1/20 for independent pairs).
#   python3 checks.py DIR...        (needs numpy and scipy)
import csv, math, statistics, sys
import numpy as np
from scipy import stats


def load(d):
    rows, cells = {}, []
    for side in ("base", "results"):
        for x in csv.DictReader(open(f"{d}/{side}.csv")):
            ex = dict(kv.split("=", 1) for kv in x["extras"].split(";") if "=" in kv)
            c = (x["scheduler"], x["workers"], x["workload"])
            rows[(side, c, int(x["run"]))] = (x, int(float(ex.get("ab_order", "0"))))
            if side == "results" and c not in cells:
                cells.append(c)
    return rows, cells


def value(row, m):
    v = row[0][m]
    return float(v) if v and float(v) > 0 else None


for d in sys.argv[1:]:
    rows, cells = load(d)
    seq = []
    for c in cells:
        p99 = [value(r, "p99_us") for k, r in rows.items() if k[1] == c]
        med = statistics.median([v for v in p99 if v])
        for run in range(20):
            pair = sorted((rows[(s, c, run)][1], value(rows[(s, c, run)], "p99_us")) for s in ("base", "results")
                          if (s, c, run) in rows)
            seq += [math.log(v / med) for _, v in pair if v]
    z = np.array(seq) - np.mean(seq)
    acf = [float(np.dot(z[:-l], z[l:]) / np.dot(z, z)) for l in range(1, 5)]
    out = [f"{d}: runs' log p99 autocorrelation, lags 1-4: " + " ".join(f"{a:+.2f}" for a in acf)]
    for m in ("p50_us", "p99_us", "cpu_us_per_op"):
        meds, sig, ac = [], 0, []
        for c in cells:
            order, ratio = [], []
            for run in range(20):
                b, cu = rows.get(("base", c, run)), rows.get(("results", c, run))
                if not b or not cu or not value(b, m) or not value(cu, m):
                    ratio.append(None)
                    continue
                first, second = (b, cu) if b[1] == 0 else (cu, b)
                order.append(math.log(value(second, m) / value(first, m)))
                ratio.append(math.log(value(cu, m) / value(b, m)))
            if len(order) > 5:
                meds.append(statistics.median(order))
                sig += stats.wilcoxon(order).pvalue < 0.05
            have = [r for r in ratio if r is not None]
            if len(have) > 10:
                mu = statistics.mean(have)
                num = sum((ratio[i] - mu) * (ratio[i + 1] - mu) for i in range(19)
                          if ratio[i] is not None and ratio[i + 1] is not None)
                ac.append(num / sum((r - mu) ** 2 for r in have))
        out.append(f"  {m}: second run vs first, median over cells {statistics.median(meds) * 100:+.1f} %, "
                   f"Wilcoxon p < 0.05 in {sig}/{len(meds)} cells; pairs' lag-1 autocorrelation, "
                   f"mean over cells {statistics.mean(ac):+.3f}")
    print("\n".join(out))
