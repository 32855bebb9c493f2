# Offline power of candidate paired tests (t, Yuen 20 %-trimmed, Wilcoxon signed-rank) and
# BH families (all comparisons / per metric) on the measured pairs, n = 5, 8, 12:
#   python3 alternatives.py DIR1 DIR2 DIR3   (each with base.csv and results.csv)
# Offline power of candidate gate statistics on the measured A/B pairs.
import csv, math, sys, itertools
import numpy as np
from scipy import stats

METRICS = {"throughput_per_s": (True, 0.05), "p50_us": (False, 0.05), "p90_us": (False, 0.05),
           "p99_us": (False, 0.10), "p999_us": (False, 0.10), "cpu_us_per_op": (False, 0.10)}
ALPHA = 0.05

def load(d, n):
    b = {}; c = {}
    for side, store in (("base", b), ("results", c)):
        for x in csv.DictReader(open(f"{d}/{side}.csv")):
            if x["status"] != "ok" or int(x["run"]) >= n: continue
            store[(x["scheduler"], x["workers"], x["workload"], int(x["run"]))] = x
    cells = sorted({k[:3] for k in c})
    data = {}
    for cell in cells:
        for m in METRICS:
            lr = []
            for run in range(n):
                k = cell + (run,)
                if k in b and k in c and b[k][m] and c[k][m] and float(b[k][m]) > 0 and float(c[k][m]) > 0:
                    lr.append(math.log(float(c[k][m]) / float(b[k][m])))
            if len(lr) >= 3:
                data[(cell, m)] = np.array(lr)
    return data

def ttest(lr):
    return stats.ttest_1samp(lr, 0.0).pvalue, float(np.mean(lr))

def yuen(lr, trim=0.2):
    # paired Yuen: trimmed mean of differences, winsorized variance
    x = np.sort(lr); n = len(x); g = int(math.floor(trim * n)); h = n - 2 * g
    if h < 2: return 1.0, float(np.mean(x))
    tm = np.mean(x[g:n - g])
    w = x.copy(); w[:g] = x[g]; w[n - g:] = x[n - g - 1]
    sw = np.var(w, ddof=1)
    se = math.sqrt(sw) / ((1 - 2 * trim) * math.sqrt(n)) if sw > 0 else 1e-12
    t = tm / se
    return 2 * stats.t.sf(abs(t), h - 1), float(tm)

def wilcoxon(lr):
    if np.all(lr == 0): return 1.0, 0.0
    return stats.wilcoxon(lr).pvalue, float(np.median(lr))

def bh(ps):
    ps = np.array(ps); m = len(ps); order = np.argsort(ps); q = np.empty(m)
    prev = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]; prev = min(prev, ps[j] * m / (i + 1)); q[j] = prev
    return q

def verdicts(data, test, family, res=None):
    keys = list(data)
    if res is None: res = {k: test(data[k]) for k in keys}
    q = {}
    groups = {}
    for k in keys:
        groups.setdefault(k[1] if family == "metric" else "all", []).append(k)
    for g in groups.values():
        for k, qq in zip(g, bh([res[k][0] for k in g])): q[k] = qq
    out = {}
    for k in keys:
        hib, floor = METRICS[k[1]]
        p, est = res[k]; change = math.exp(est) - 1
        worse = -change if hib else change
        sig = p < ALPHA and q[k] < ALPHA
        out[k] = "regressed" if sig and worse >= floor else "improved" if sig and -worse >= floor else "unchanged"
    return out

TESTS = {"t": ttest, "yuen20": yuen, "wilcoxon": wilcoxon}
def main():
    dirs = sys.argv[1:]
    for n in (5, 8, 12):
        for fam in ("all", "metric"):
            for tname, test in TESTS.items():
                false = 0; total = 0
                power = {}
                for d in dirs:
                    data = load(d, n)
                    res0 = {k: test(data[k]) for k in data}
                    v0 = verdicts(data, test, fam, res0)
                    false += sum(1 for x in v0.values() if x != "unchanged"); total += len(v0)
                    for m in ("p99_us", "p50_us", "cpu_us_per_op"):
                        for ch in (0.1, 0.2, 0.3):
                            for (cell, mm) in [k for k in data if k[1] == m]:
                                d2 = dict(data); d2[(cell, m)] = data[(cell, m)] + math.log(1 + ch)
                                r2 = dict(res0); r2[(cell, m)] = test(d2[(cell, m)])
                                v = verdicts(d2, test, fam, r2)[(cell, m)]
                                f, t = power.get((m, ch), (0, 0)); power[(m, ch)] = (f + (v == "regressed"), t + 1)
                row = " ".join(f"{m[:4]}+{int(ch*100)}:{f}/{t}" for (m, ch), (f, t) in sorted(power.items()))
                print(f"n={n:2d} fam={fam:6s} {tname:8s} false {false}/{total}  {row}")
main()
