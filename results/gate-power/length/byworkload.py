# The power table by workload: cells whose verdict is the one a planted
# change deserves, per metric x workload x change, over the plant.json of
# the given DIRs (analyze.sh's $G/40/inv* or $G/20/inv*; ../closed/'s).
# Metrics in the order they were planted; a column per size of change,
# headed by its sign (+ for slower latency or CPU, - for less throughput).
#   python3 byworkload.py /tmp/gl/40/inv*
import json, sys
from collections import defaultdict

h = defaultdict(lambda: [0, 0])
metrics, sizes = [], defaultdict(set)
for d in sys.argv[1:]:
    for p in json.load(open(f"{d}/plant.json"))["plants"]:
        m, c = p["plant"]["metric"], round(p["plant"]["change"] * 100)
        if m not in metrics:
            metrics.append(m)
        sizes[abs(c)].add("+" if c > 0 else "-")
        for cell in p["cells"]:
            k = (m, cell["cell"]["workload"], abs(c))
            h[k][0] += cell["verdict"] == p["expected"]
            h[k][1] += 1
cols = sorted(sizes)
head = " | ".join(("".join(sorted(sizes[c])) if len(sizes[c]) == 1 else "±") + f"{c} %" for c in cols)
print(f"| metric | workload | {head} |\n|---|---|" + "---:|" * len(cols))


def cell(k):
    # A size not planted into this metric is left blank.
    return f"{h[k][0]}/{h[k][1]}" if h[k][1] else ""


for m in metrics:
    for w in sorted({k[1] for k in h if k[0] == m}):
        print(f"| {m} | {w} | " + " | ".join(cell((m, w, c)) for c in cols) + " |")
