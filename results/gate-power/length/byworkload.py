# The power table by workload: cells whose verdict is the one a planted
# change deserves, per metric x workload x change, over the plant.json of
# the given DIRs (analyze.sh's $G/40/inv* or $G/20/inv*).
#   python3 byworkload.py /tmp/gl/40/inv*
import json, sys
from collections import defaultdict

h = defaultdict(lambda: [0, 0])
for d in sys.argv[1:]:
    for p in json.load(open(f"{d}/plant.json"))["plants"]:
        m, c = p["plant"]["metric"], round(p["plant"]["change"] * 100)
        for cell in p["cells"]:
            k = (m, cell["cell"]["workload"], c)
            h[k][0] += cell["verdict"] == p["expected"]
            h[k][1] += 1
print("| metric | workload | +10 % | +20 % | +30 % |\n|---|---|---:|---:|---:|")
for m in ("p99_us", "p50_us", "cpu_us_per_op"):
    for w in sorted({k[1] for k in h}):
        print(f"| {m} | {w} | " + " | ".join(f"{h[(m, w, c)][0]}/{h[(m, w, c)][1]}" for c in (10, 20, 30)) + " |")
