# Offline: which nightly design gives the shift test more power on p99 at the
# same machine time -- more pairs of 1 s, or pairs of longer runs? Built from
# the per-run HdrHistogram logs (--hdr-dir) of the stored A/B invocations of
# identical code that ../shift/analyze.sh unpacks (DIR/hdr/<cell>.hlog is the
# current side, DIR/hdr/base/<cell>.hlog the base; tags run0..run19).
# Designs, per cell:
#   20x1s  one invocation's 20 pairs (the nightly's old default)
#   10x2s  one invocation, runs 2k and 2k+1 added into one 2-s run (same time)
#   40x1s  two invocations' pairs together (twice the time)
#   20x2s  two invocations, each run pair added into a 2-s run (twice the time)
# For each: the shift test (median over all base x current combinations of
# ln c - ln b, sign-flip null over whole pairs, as stats/shift.rs) on p50 and
# p99, unplanted and with +10/+20/+30 % planted into the current side. A cell
# is flagged as compare decides: p < 0.05, BH q < 0.05 among the invocation's
# other comparisons (compare.json of the first invocation, 108 of them, or the
# full nightly's 648 with COPIES=6), and the change at least the floor (10 %
# for p99, 5 % for p50).
#   COPIES=1 python3 designs.py DIR...   (the nine invocations, in order;
#   DESIGNS=40x1s,20x2s picks designs). Output as run: designs.txt.
import json, os, sys
import numpy as np
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'pooled'))
sys.path.insert(0, os.path.join(here, '..', 'tuned'))
sys.path.insert(0, os.path.join(here, '..', 'shift'))
import hlog
from alternatives import stat
from alpha import q_of, FLOOR

COPIES = int(os.environ.get("COPIES", "1"))
QS = {"p50_us": 0.50, "p99_us": 0.99}


def runs_of(path):
    """[(values, counts)] for run0..runN of one log (the corrected histograms)."""
    logs = hlog.read(path)
    out = []
    i = 0
    while f"run{i}" in logs:
        out.append(logs[f"run{i}"])
        i += 1
    return out


def add(hs):
    vals = np.concatenate([v for v, _ in hs]); cnts = np.concatenate([c for _, c in hs])
    u, inv = np.unique(vals, return_inverse=True)
    return u, np.bincount(inv, weights=cnts)


def per_run(hs, q, join):
    """ln of quantile q of each run, after adding each `join` consecutive runs."""
    out = []
    for k in range(0, len(hs) - join + 1, join):
        v, c = add(hs[k:k + join]) if join > 1 else hs[k]
        out.append(np.log(hlog.quantile(v, c, q)))
    return out


def hl(b, c):
    # The shift statistic as ../shift/alternatives.py computes it.
    return stat("hl", b, c)


def shift_p(b, c, rng, cap=20000):
    b = np.asarray(b); c = np.asarray(c)
    obs = hl(b[None], c[None])[0]
    hits = draws = 0
    while draws < cap:
        k = 2000
        flips = rng.random((k, len(b))) < 0.5
        t = hl(np.where(flips, c, b), np.where(flips, b, c))
        hits += int(np.sum(np.abs(t) >= abs(obs) - 1e-12)); draws += k
        if hits >= 20:
            break
    return obs, (1 + hits) / (1 + draws)


def others_of(d, cell, metric):
    ps = []
    for x in json.load(open(f"{d}/compare.json"))["comparisons"]:
        if x["p_value"] is None:
            continue
        cc = x["cell"]
        if (f'{cc["scheduler"]}_w{cc["workers"]}_{cc["workload"]}', x["metric"]) == (cell, metric):
            continue
        ps.append(x["p_value"])
    return ps


def main(dirs):
    rng = np.random.default_rng(7)
    cells = sorted(f[:-5] for f in os.listdir(f"{dirs[0]}/hdr") if f.endswith(".hlog"))
    groups = {
        "20x1s": ([[d] for d in dirs], 1),
        "10x2s": ([[d] for d in dirs], 2),
        "40x1s": ([[dirs[i], dirs[(i + 1) % len(dirs)]] for i in range(len(dirs))], 1),
        "20x2s": ([[dirs[i], dirs[(i + 1) % len(dirs)]] for i in range(len(dirs))], 2),
    }
    only = os.environ.get("DESIGNS")
    cache = {}
    for name, (sets, join) in groups.items():
        if only and name not in only.split(","):
            continue
        res = {}
        for ds in sets:
            for cell in cells:
                for m, q in QS.items():
                    b, c = [], []
                    for d in ds:
                        key = (d, cell)
                        if key not in cache:
                            cache[key] = (runs_of(f"{d}/hdr/base/{cell}.hlog"), runs_of(f"{d}/hdr/{cell}.hlog"))
                        hb, hc = cache[key]
                        n = min(len(hb), len(hc))
                        b += per_run(hb[:n], q, join); c += per_run(hc[:n], q, join)
                    others = np.array(others_of(ds[0], cell, m) * COPIES)
                    for pct in (0, 10, 20, 30):
                        obs, p = shift_p(b, np.asarray(c) + np.log1p(pct / 100), rng)
                        ch = np.expm1(obs)
                        hit = p < 0.05 and q_of(p, others) < 0.05 and abs(ch) >= FLOOR[m]
                        h, t = res.get((m, pct), (0, 0)); res[(m, pct)] = (h + hit, t + 1)
        print(f"{name} ({len(b)} pairs) x{COPIES}: " + ", ".join(
            f"{m} {'+' + str(p) + '%' if p else 'false alarms'} {h}/{t}" for (m, p), (h, t) in sorted(res.items())), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
