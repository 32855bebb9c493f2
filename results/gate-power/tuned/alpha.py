# The gate's false alarms and power at other significance levels, offline, on
# stored A/B invocations of identical code (each DIR holds `compare --json`
# as compare.json and `compare --plant ... --json` as plant.json, both with
# --hdr-dir). Prints, over all DIRs:
#  - how the unplanted p-values spread (under "no change" about 5 % fall below
#    0.05), per kind of test;
#  - per level a (p < a and BH q < a, and the change at least the metric's floor,
#    as `compare` decides): false alarms, and the planted cells flagged at +20 %
#    and +30 %, corrected over the invocation's comparisons (108 here) and over
#    a family 6 times as large (the full nightly's 648: the unplanted p-values
#    repeated, as ../pooled/family.py does).
#   python3 alpha.py DIR...
import json, sys
import numpy as np

FLOOR = {"throughput_per_s": 0.05, "p50_us": 0.05, "p90_us": 0.05, "p99_us": 0.10, "p999_us": 0.10, "cpu_us_per_op": 0.10}
POOLED = {"p50_us", "p90_us", "p99_us", "p999_us"}


def bh(ps):
    ps = np.asarray(ps, dtype=float)
    m = len(ps)
    order = np.argsort(ps)
    q = np.empty(m)
    prev = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]
        prev = min(prev, ps[j] * m / (i + 1))
        q[j] = prev
    return q


def q_of(p, others):
    """q of p within the family p + others."""
    ps = np.sort(np.append(others, p))
    m = len(ps)
    q = np.minimum.accumulate((ps * m / np.arange(1, m + 1))[::-1])[::-1]
    return float(q[np.searchsorted(ps, p)])


def main(dirs):
    runs = [(json.load(open(f"{d}/compare.json"))["comparisons"], json.load(open(f"{d}/plant.json"))["plants"]) for d in dirs]
    for label, kinds in (("latency percentiles (pooled sign-flip test)", POOLED), ("CPU per request and throughput (t-test)", None)):
        ps = [c["p_value"] for comp, _ in runs for c in comp
              if c["p_value"] is not None and ((c["metric"] in POOLED) == (kinds is not None))]
        print(f"{label}: {len(ps)} unplanted p-values; below 0.01: {sum(p < 0.01 for p in ps)}, "
              f"below 0.05: {sum(p < 0.05 for p in ps)} ({100 * sum(p < 0.05 for p in ps) / len(ps):.1f} %), "
              f"below 0.2: {sum(p < 0.2 for p in ps)}")
    for copies in (1, 6):
        for a in (0.05, 0.03, 0.02, 0.01):
            false = invs = 0
            power = {}
            for comp, plants in runs:
                tested = [c for c in comp if c["p_value"] is not None]
                ps = [c["p_value"] for c in tested]
                qs = bh(ps * copies)[: len(ps)]
                n = sum(1 for c, q in zip(tested, qs) if c["p_value"] < a and q < a and abs(c["change"]) >= FLOOR[c["metric"]])
                false += n
                invs += n > 0
                for p in plants:
                    metric, change = p["plant"]["metric"], round(p["plant"]["change"] * 100)
                    for cell in p["cells"]:
                        pp = cell["p_value"]
                        hit = False
                        if pp is not None and change / 100 >= FLOOR[metric]:
                            others = list(ps)
                            same = [c["p_value"] for c in tested if c["metric"] == metric and c["cell"] == cell["cell"]]
                            if same:
                                others.remove(same[0])
                            hit = pp < a and q_of(pp, np.array(others + ps * (copies - 1))) < a
                        h, t = power.get((metric, change), (0, 0))
                        power[(metric, change)] = (h + hit, t + 1)
            cells = ", ".join(f"{m} +{c}% {h}/{t}" for (m, c), (h, t) in sorted(power.items()) if c in (20, 30))
            print(f"family x{copies}, a = {a}: false alarms {false} (in {invs} of {len(runs)} invocations); {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
