# Offline power of a pooled-histogram latency test against the gate's paired
# t-test, on A/B invocations of identical code that kept both sides' full
# histograms (run.sh):
#
#   python3 pooled.py [--drop-slipped] [--pairs 12,16,20] DIR1 DIR2 DIR3
#
# The pooled statistic of a cell: T = ln(Q(pooled current) / Q(pooled base)),
# Q a quantile (p50, p99, p99.9) of the histogram of all the cell's runs on one
# side added together. Its test respects the correlation inside a run: the
# sign-flip permutation test swaps whole runs between the sides of a pair
# (under "no change" the two runs of a pair are exchangeable), so a stall that
# fattens one run's tail moves as a block. p = (1 + #{|T*| >= |T|}) / (1 + M),
# M = 1999 flips, 19999 when p < 0.02, 99999 when none of those reached |T|
# (the BH threshold of one cell among 648 comparisons, the full nightly's, is
# 0.05/648 = 7.7e-5; `wsbench compare` draws up to 99,999 as well).
#
# Families, each Benjamini-Hochberg over all 6 metrics x cells of an invocation
# (the gate's): `gate` = the paired t-test on per-run values for every metric
# (what `wsbench compare` does today; checks this script against plant.sh);
# `pooled-tail` = p99/p99.9 by the pooled test, the rest by t; `pooled-lat` =
# p50/p90/p99/p99.9 by the pooled test. A planted change multiplies one cell's
# current-side metric (t-test: each run's value; pooled: each recorded
# latency) by 1 + change.
import csv, math, sys
import numpy as np
from scipy import stats

import hlog

METRICS = {"throughput_per_s": (True, 0.05), "p50_us": (False, 0.05), "p90_us": (False, 0.05),
           "p99_us": (False, 0.10), "p999_us": (False, 0.10), "cpu_us_per_op": (False, 0.10)}
QUANT = {"p50_us": 0.5, "p90_us": 0.9, "p99_us": 0.99, "p999_us": 0.999}
ALPHA = 0.05
RATIO = 1.005  # bin width of the common grid: 0.5 %
RNG = np.random.default_rng(7)
DROP_SLIPPED = False


def load(d, n):
    rows = {}
    for side in ("base", "results"):
        for x in csv.DictReader(open(f"{d}/{side}.csv")):
            if x["status"] != "ok" or int(x["run"]) >= n:
                continue
            rows[(side, x["scheduler"], x["workers"], x["workload"], int(x["run"]))] = x
    cells = sorted({k[1:4] for k in rows if k[0] == "results"})
    out = {}
    for cell in cells:
        runs = [r for r in range(n) if ("base",) + cell + (r,) in rows and ("results",) + cell + (r,) in rows]
        if DROP_SLIPPED:  # leave out pairs in which either side's generator slipped its schedule
            runs = [r for r in runs if all(rows[(s,) + cell + (r,)]["schedule_slipped"] != "true" for s in ("base", "results"))]
        if len(runs) < 3:
            continue
        name = f"{cell[0]}_w{cell[1]}_{cell[2]}.hlog"
        hb = hlog.read(f"{d}/hdr/base/{name}")
        hc = hlog.read(f"{d}/hdr/{name}")
        lr = {}
        for m in METRICS:
            v = []
            for r in runs:
                b, c = rows[("base",) + cell + (r,)][m], rows[("results",) + cell + (r,)][m]
                if b and c and float(b) > 0 and float(c) > 0:
                    v.append(math.log(float(c) / float(b)))
            if len(v) >= 3:
                lr[m] = np.array(v)
        out[cell] = {"lr": lr, "base": [hb[f"run{r}"] for r in runs], "cur": [hc[f"run{r}"] for r in runs]}
    return out


def ttest(lr):
    return stats.ttest_1samp(lr, 0.0).pvalue, float(np.mean(lr))


def binned(runs, lo, nb, scale=1.0):
    """Each run's counts on the grid lo * RATIO^k, k < nb; below the grid in column 0, above in nb-1."""
    m = np.zeros((len(runs), nb))
    for i, (v, c) in enumerate(runs):
        k = np.floor(np.log(np.maximum(v * scale, 1.0) / lo) / math.log(RATIO)).astype(int)
        np.add.at(m[i], np.clip(k, 0, nb - 1), c)
    return m


def pooled_q(mat, q):
    """Quantile bin of each row's pooled histogram (rows = count vectors)."""
    cum = np.cumsum(mat, axis=1)
    target = q * cum[:, -1:]
    return np.argmax(cum >= target, axis=1)


def pooled_test(base, cur, q, scale=1.0):
    # The pooled quantile lies between the runs' own quantiles, so the grid
    # only has to span those (plus a margin); the rest collapses into the end bins.
    per = [hlog.quantile(v, c, q) for v, c in base] + [hlog.quantile(v * scale, c, q) for v, c in cur]
    lo = max(min(per) / 1.5, 1.0)
    nb = int(math.ceil(math.log(max(per) * 1.5 / lo) / math.log(RATIO))) + 2
    B = binned(base, lo, nb)
    C = binned(cur, lo, nb, scale)
    sb, sc = B.sum(0, keepdims=True), C.sum(0, keepdims=True)
    t0 = float(pooled_q(sc, q)[0] - pooled_q(sb, q)[0]) * math.log(RATIO)
    D = B - C  # swapping pair i moves D_i from base to current
    hits, done = 0, 0
    for total in (1999, 19999, 99999):
        if total == 99999 and hits > 0:
            break
        while done < total:
            k = min(2000, total - done)
            S = RNG.integers(0, 2, size=(k, len(base))).astype(np.float64)
            cur_p = sc + S @ D
            base_p = sb - S @ D
            t = (pooled_q(cur_p, q) - pooled_q(base_p, q)) * math.log(RATIO)
            hits += int(np.sum(np.abs(t) >= abs(t0) - 1e-12))
            done += k
        p = (1 + hits) / (1 + done)
        if p >= 0.02:
            break
    return p, t0


def bh(ps):
    ps = np.array(ps); m = len(ps); order = np.argsort(ps); q = np.empty(m)
    prev = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]; prev = min(prev, ps[j] * m / (i + 1)); q[j] = prev
    return q


def verdict(res, key, q):
    hib, floor = METRICS[key[1]]
    p, est = res[key]
    change = math.exp(est) - 1
    worse = -change if hib else change
    sig = p < ALPHA and q < ALPHA
    return "regressed" if sig and worse >= floor else "improved" if sig and -worse >= floor else "unchanged"


LAT = {"p50_us", "p90_us", "p99_us", "p999_us"}
# name: (metrics judged pooled, copies of the unplanted comparisons in the BH
# family: 6 stands for the full nightly matrix's 108 cells x 6 metrics = 648)
FAMILIES = {"gate": (set(), 1), "pooled-tail": ({"p99_us", "p999_us"}, 1), "pooled-lat": (LAT, 1),
            "gate x6": (set(), 6), "pooled-lat x6": (LAT, 6)}
PLANTS = [(m, ch) for m in ("p99_us", "p50_us", "cpu_us_per_op") for ch in (0.1, 0.2, 0.3)]


def main():
    global DROP_SLIPPED
    args = sys.argv[1:]
    if args and args[0] == "--drop-slipped":
        DROP_SLIPPED = True
        args = args[1:]
    pairs = [12, 16, 20]
    if args and args[0] == "--pairs":
        pairs = [int(x) for x in args[1].split(",")]
        args = args[2:]
    for n in pairs:
        tally = {f: {"false": [0, 0]} for f in FAMILIES}
        for d in args:
            data = load(d, n)
            t_res = {(c, m): ttest(lr) for c, v in data.items() for m, lr in v["lr"].items()}
            p_res = {}
            planted = {}
            for c, v in data.items():
                for m, q in QUANT.items():
                    p_res[(c, m)] = pooled_test(v["base"], v["cur"], q)
            for fam, (pooled, copies) in FAMILIES.items():
                res = {k: (p_res[k] if k[1] in pooled else t_res[k]) for k in t_res}
                keys = list(res)
                extra = [res[k][0] for k in keys] * (copies - 1)
                qs = dict(zip(keys, bh([res[k][0] for k in keys] + extra)))
                v0 = {k: verdict(res, k, qs[k]) for k in keys}
                tally[fam]["false"][0] += sum(x != "unchanged" for x in v0.values())
                tally[fam]["false"][1] += len(v0)
                for m, ch in PLANTS:
                    for c in data:
                        k = (c, m)
                        if k not in res:
                            continue
                        r2 = dict(res)
                        if m in pooled:
                            if (c, m, ch) not in planted:
                                planted[(c, m, ch)] = pooled_test(data[c]["base"], data[c]["cur"], QUANT[m], 1 + ch)
                            r2[k] = planted[(c, m, ch)]
                        else:
                            r2[k] = ttest(data[c]["lr"][m] + math.log(1 + ch))
                        q2 = dict(zip(keys, bh([r2[x][0] for x in keys] + extra)))
                        f, t = tally[fam].get((m, ch), (0, 0))
                        tally[fam][(m, ch)] = (f + (verdict(r2, k, q2[k]) == "regressed"), t + 1)
            # each cell's pooled p-values and changes, unplanted, for the record
            for c in data:
                print(f"n={n} {d} {'/'.join(c)} " + " ".join(
                    f"{m}: t p={t_res[(c, m)][0]:.2g} {math.exp(t_res[(c, m)][1]) - 1:+.1%}; pooled p={p_res[(c, m)][0]:.2g} "
                    f"{math.exp(p_res[(c, m)][1]) - 1:+.1%}" for m in ("p50_us", "p99_us")), flush=True)
        for fam in FAMILIES:
            fa = tally[fam]["false"]
            row = " ".join(f"{m[:4]}+{int(ch * 100)}:{tally[fam][(m, ch)][0]}/{tally[fam][(m, ch)][1]}" for m, ch in PLANTS)
            print(f"n={n:2d} {fam:11s} false {fa[0]}/{fa[1]}  {row}", flush=True)


main()
