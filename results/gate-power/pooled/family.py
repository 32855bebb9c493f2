# The gate's planted verdicts (analyze.sh: `compare --plant` JSON) in a larger
# Benjamini-Hochberg family: the unplanted comparisons' p-values repeated
# `copies` times (6 stands for the full nightly matrix on a 2-vCPU machine:
# 9 runtimes x 2 worker counts x 6 workloads x 6 metrics = 648 comparisons,
# against these invocations' 18 cells x 6 = 108). A planted cell then counts
# when the gate flagged it in its own file and its q in the larger family is
# still below 0.05 (p and the floor are unchanged by the family's size).
#   python3 family.py DIR   (DIR/inv{1,2,3}-n{12,16,20}/{compare,plant}.json)
import json, sys
import numpy as np

ALPHA = 0.05


def bh_first(p, others):
    """q of p within the family p + others."""
    ps = np.sort(np.append(others, p))
    m = len(ps)
    q = np.minimum.accumulate((ps * m / np.arange(1, m + 1))[::-1])[::-1]
    return float(q[np.searchsorted(ps, p)])


root = sys.argv[1]
for n in (12, 16, 20):
    rows = {}
    false = [0, 0]
    for i in (1, 2, 3):
        d = f"{root}/inv{i}-n{n}"
        comp = json.load(open(f"{d}/compare.json"))["comparisons"]
        plant = json.load(open(f"{d}/plant.json"))
        false[0] += plant["false_alarms"]
        false[1] += plant["comparisons"]
        ps = [c["p_value"] for c in comp if c["p_value"] is not None]
        for p in plant["plants"]:
            key = (p["plant"]["metric"], round(p["plant"]["change"] * 100))
            for c in p["cells"]:
                hit1 = c["verdict"] == p["expected"]
                # the family without the cell's own unplanted comparison, once
                same = [x["p_value"] for x in comp if x["metric"] == key[0] and x["cell"] == c["cell"]]
                others = list(ps)
                if same:
                    others.remove(same[0])
                hit6 = hit1 and c["p_value"] is not None and bh_first(c["p_value"], np.array(others + ps * 5)) < ALPHA
                f1, f6, t = rows.get(key, (0, 0, 0))
                rows[key] = (f1 + hit1, f6 + hit6, t + 1)
    print(f"n={n}: false alarms {false[0]} of {false[1]} comparisons")
    for (m, ch), (f1, f6, t) in sorted(rows.items(), key=lambda kv: (kv[0][0] != "cpu_us_per_op", kv[0])):
        print(f"  {m} +{ch}%: {f1}/{t} (family of 108), {f6}/{t} (family of 648)")
