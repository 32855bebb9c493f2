# A two-stage gate, offline: would re-measuring a flagged cell before failing
# the night remove the false alarms and keep the power? Stage 1 is the gate as
# it is (alpha.py's rule at a = 0.05 over the invocation's comparisons). Stage 2
# stands in for a fresh A/B run of only the flagged cell: the same cell in
# another stored invocation of identical code (fresh pairs, same machine),
# judged over that cell's own comparisons (its 6 metrics, Benjamini-Hochberg),
# where the same metric must again be significant (p and q < 0.05), in the same
# direction, by at least the metric's floor. A planted change is planted in
# both stages. Every ordered pair of invocations (A, B), A != B, is one trial.
#   python3 confirm.py DIR...   (DIRs as for alpha.py)
import json, sys
from itertools import permutations

from alpha import FLOOR, bh

A = 0.05
HIB = {"throughput_per_s"}


def key(c):
    return tuple(sorted(c.items()))


def load(d):
    comp = [c for c in json.load(open(f"{d}/compare.json"))["comparisons"] if c["p_value"] is not None]
    qs = bh([c["p_value"] for c in comp])
    byc = {}
    for c, q in zip(comp, qs):
        byc[(key(c["cell"]), c["metric"])] = dict(c, q=q)
    planted = {}
    for p in json.load(open(f"{d}/plant.json"))["plants"]:
        m, ch = p["plant"]["metric"], round(p["plant"]["change"] * 100)
        for cell in p["cells"]:
            planted[(key(cell["cell"]), m, ch)] = cell
    return byc, planted


def worse(metric, change):
    return -change if metric in HIB else change


def stage2(byc, cell, metric, p_sub=None, change_sub=None):
    """Whether `metric` of `cell` is flagged the same way among the cell's own comparisons."""
    mine = [(m, c) for (k, m), c in byc.items() if k == cell]
    ps = [p_sub if (m == metric and p_sub is not None) else c["p_value"] for m, c in mine]
    qs = dict(zip([m for m, _ in mine], bh(ps)))
    if metric not in qs:
        return False
    c = byc[(cell, metric)]
    p = p_sub if p_sub is not None else c["p_value"]
    change = change_sub if change_sub is not None else c["change"]
    return p < A and qs[metric] < A and worse(metric, change) >= FLOOR[metric]


runs = [load(d) for d in sys.argv[1:]]
n = len(runs)
false1 = false2 = 0
repeated = []
power = {}
for a, b in permutations(range(n), 2):
    byc_a, planted_a = runs[a]
    byc_b, planted_b = runs[b]
    for (cell, metric), c in byc_a.items():
        if c["p_value"] < A and c["q"] < A and abs(c["change"]) >= FLOOR[metric]:
            false1 += 1
            d = byc_b.get((cell, metric))
            if d and stage2(byc_b, cell, metric) and (d["change"] > 0) == (c["change"] > 0):
                false2 += 1
                repeated.append(f"{sys.argv[1 + a]} -> {sys.argv[1 + b]}: {dict(cell)} {metric} "
                                f"{c['change']:+.1%} then {d['change']:+.1%}")
    for (cell, metric, ch), pc in planted_a.items():
        if ch != 20:
            continue
        h1 = pc["verdict"] == "regressed"
        pb = planted_b.get((cell, metric, ch))
        base_b = byc_b.get((cell, metric))
        h2 = False
        if h1 and pb and pb["p_value"] is not None and base_b:
            h2 = stage2(byc_b, cell, metric, pb["p_value"], (1 + base_b["change"]) * (1 + ch / 100) - 1)
        s1, s2, t = power.get(metric, (0, 0, 0))
        power[metric] = (s1 + h1, s2 + h2, t + 1)
trials = n * (n - 1)
print(f"{n} invocations, {trials} ordered pairs (A, B)")
print(f"false alarms: stage 1 alone {false1} (each invocation's counted {n - 1} times), confirmed by stage 2: {false2}")
for r in repeated:
    print(f"  repeated: {r}")
for m, (s1, s2, t) in sorted(power.items()):
    print(f"  {m} +20%: stage 1 {s1}/{t} ({100 * s1 / t:.0f} %), both stages {s2}/{t} ({100 * s2 / t:.0f} %)")
