# How many pairs each open-loop cell would need for 80 % power against a +20 % change, from the
# spread of its 12 measured pair log-ratios (a normal-approximation model, not a measurement):
#   n = ((z(1 - a/2) + z(0.8)) * s / ln 1.2)^2
# with a = 0.05/54 (Benjamini-Hochberg over one metric's 54 cells with one change planted) or
# 0.05/162 (over the three metrics), and s the pairs' sd, or 1.4826 x their MAD (robust to a
# single stalled run).
#   python3 pairs-needed.py DIR1 DIR2 DIR3   (each with base.csv and results.csv, gunzipped)
import csv, math, sys
import numpy as np
from scipy import stats

METRICS = ("p50_us", "p99_us", "cpu_us_per_op")
PAIRS = (12, 20, 30, 50)

def spreads(dirs):
    sd = {m: [] for m in METRICS}
    mad = {m: [] for m in METRICS}
    for d in dirs:
        b, c = {}, {}
        for side, store in (("base", b), ("results", c)):
            for x in csv.DictReader(open(f"{d}/{side}.csv")):
                if x["status"] == "ok":
                    store[(x["scheduler"], x["workers"], x["workload"], int(x["run"]))] = x
        for cell in sorted({k[:3] for k in c}):
            for m in METRICS:
                keys = [cell + (r,) for r in range(12) if cell + (r,) in b and cell + (r,) in c]
                lr = np.array([math.log(float(c[k][m]) / float(b[k][m])) for k in keys if b[k][m] and c[k][m]])
                sd[m].append(lr.std(ddof=1))
                mad[m].append(1.4826 * np.median(abs(lr - np.median(lr))))
    return sd, mad

def main():
    sd, mad = spreads(sys.argv[1:])
    effect = math.log(1.2)
    for m in METRICS:
        for a in (0.05 / 54, 0.05 / 162):
            z = stats.norm.isf(a / 2) + stats.norm.isf(0.2)
            need = ((z * np.array(sd[m]) / effect) ** 2)
            need_r = ((z * np.array(mad[m]) / effect) ** 2)
            print(f"{m:14s} a={a:.1e} median sd {np.median(sd[m]):.3f}  cells powered at n={PAIRS}: "
                  f"{[int((need <= n).sum()) for n in PAIRS]}, with the MAD spread: "
                  f"{[int((need_r <= n).sum()) for n in PAIRS]} of {len(sd[m])}")

main()
