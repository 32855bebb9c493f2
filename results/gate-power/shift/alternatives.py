# Offline, before the shift test was built: other statistics of the per-run log
# percentiles, each with the sign-flip null over the pairs (whole pairs swapped),
# on the directories analyze.sh unpacks (compare.json there gives the other
# metrics' p-values, for the Benjamini-Hochberg family). KIND:
#   hl    median over all (base run, current run) combinations of ln c - ln b
#         (what compare now does, stats/shift.rs)
#   med   median of the current runs minus median of the base runs
#   mean  mean minus mean
#   trim  20 %-trimmed mean minus 20 %-trimmed mean
# Added in stop 50, statistics of the pairs' own differences d = ln c - ln b:
#   whl   median of the Walsh averages (d_i + d_j) / 2, i <= j (the one-sample
#         Hodges-Lehmann estimate; a swap flips one d)
#   dmed  median of d
# Prints the share of unplanted p-values below 0.05, the false alarms (p and q
# below 0.05 and beyond the floor), and the planted cells flagged.
#   NPAIRS=20 COPIES=1 python3 alternatives.py KIND DIR...
# (COPIES=6: the family of the full nightly's 648 comparisons, as ../tuned/alpha.py.)
import csv, json, os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tuned'))
from alpha import bh, q_of, FLOOR

METRICS = ["p50_us", "p90_us", "p99_us"]
NPAIRS = int(os.environ.get("NPAIRS", "20"))
COPIES = int(os.environ.get("COPIES", "1"))

def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["status"] != "ok":
            continue
        key = f'{r["scheduler"]} x{r["workers"]} {r["workload"]}'
        rows.setdefault(key, {})[int(r["run"])] = r
    return rows

def stat(kind, b, c):
    # b, c: (draws, n)
    if kind == "hl":
        d = c[:, :, None] - b[:, None, :]
        return np.median(d.reshape(d.shape[0], -1), axis=1)
    if kind == "med":
        return np.median(c, axis=1) - np.median(b, axis=1)
    if kind == "whl":
        d = c - b
        i, j = np.triu_indices(d.shape[1])
        return np.median((d[:, i] + d[:, j]) / 2, axis=1)
    if kind == "dmed":
        return np.median(c - b, axis=1)
    if kind == "mean":
        return c.mean(axis=1) - b.mean(axis=1)
    if kind == "trim":
        k = b.shape[1] // 5
        sb = np.sort(b, axis=1)[:, k:-k]; sc = np.sort(c, axis=1)[:, k:-k]
        return sc.mean(axis=1) - sb.mean(axis=1)

def test(kind, b, c, rng):
    n = len(b)
    obs = stat(kind, b[None], c[None])[0]
    hits = draws = 0
    while draws < 99999:
        k = 5000 if draws else 999
        flips = rng.random((k, n)) < 0.5
        B = np.where(flips, c, b); C = np.where(flips, b, c)
        t = stat(kind, B, C)
        hits += int(np.sum(np.abs(t) >= abs(obs) - 1e-12)); draws += k
        if hits >= 20:
            return obs, hits / draws
    return obs, (1 + hits) / (1 + draws)

def main(kind, dirs):
    rng = np.random.default_rng(1)
    false = invs = 0
    power = {}
    allp = []
    for d in dirs:
        comp = json.load(open(f"{d}/compare.json"))["comparisons"]
        base, cur = load(f"{d}/base.csv"), load(f"{d}/results.csv")
        newp = {}
        for cell in base:
            runs = sorted(set(base[cell]) & set(cur.get(cell, {})))[:NPAIRS]
            for m in METRICS:
                try:
                    b = np.log([float(base[cell][i][m]) for i in runs]); c = np.log([float(cur[cell][i][m]) for i in runs])
                except ValueError:
                    continue
                obs, p = test(kind, b, c, rng)
                newp[(cell, m)] = (p, np.expm1(obs), b, c)
        tested = []
        for x in comp:
            if x["p_value"] is None: continue
            cc = x["cell"]; k = (f'{cc["scheduler"]} x{cc["workers"]} {cc["workload"]}', x["metric"])
            if x["metric"] in METRICS:
                if k not in newp: continue
                tested.append((k, newp[k][0], newp[k][1]))
            else:
                tested.append((k, x["p_value"], x["change"]))
        ps = [p for _, p, _ in tested]
        allp += [p for (k, p, _) in tested if k[1] in METRICS]
        qs = bh(ps * COPIES)[:len(ps)]
        n = sum(1 for (k, p, ch), q in zip(tested, qs) if p < 0.05 and q < 0.05 and abs(ch) >= FLOOR[k[1]])
        false += n; invs += n > 0
        for m in ["p50_us", "p99_us"]:
            for pct in (10, 20, 30):
                for (cell, mm), (p0, ch0, b, c) in newp.items():
                    if mm != m: continue
                    obs, pp = test(kind, b, c + np.log(1 + pct / 100), rng)
                    others = [p for (k, p, _) in tested if k != (cell, m)]
                    hit = pp < 0.05 and q_of(pp, np.array(others + ps * (COPIES - 1))) < 0.05 and np.expm1(obs) >= FLOOR[m]
                    h, t = power.get((m, pct), (0, 0)); power[(m, pct)] = (h + hit, t + 1)
    allp = np.array(allp)
    print(f"{kind} n={NPAIRS} x{COPIES}: unplanted latency p < 0.05: {np.sum(allp < 0.05)}/{len(allp)} ({100*np.mean(allp < 0.05):.1f} %); false alarms {false} in {invs} inv; " +
          ", ".join(f"{m} +{c}% {h}/{t}" for (m, c), (h, t) in sorted(power.items())))

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
