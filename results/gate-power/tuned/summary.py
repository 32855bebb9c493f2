# Per invocation (analyze.sh's DIRs): cells flagged `regressed` per planted change,
# the unplanted false alarms, runs whose p99 is above 3x their cell's median p99,
# runs whose load generator fell more than 1 ms behind, and the median over cells
# of the sd of the pairs' log ratio of p99 and p50.
import csv, json, math, statistics, sys
from collections import defaultdict

for d in sys.argv[1:]:
    plant = json.load(open(f"{d}/plant.json"))
    hits = defaultdict(lambda: [0, 0])
    for p in plant["plants"]:
        key = (p["plant"]["metric"], round(p["plant"]["change"] * 100))
        for c in p["cells"]:
            hits[key][0] += c["verdict"] == p["expected"]
            hits[key][1] += 1
    runs = {}
    for side in ("base", "results"):
        for x in csv.DictReader(open(f"{d}/{side}.csv")):
            if x["p99_us"]:
                runs[(side, x["scheduler"], x["workers"], x["workload"], int(x["run"]))] = x
    cells = sorted({k[1:4] for k in runs})
    spikes = lag = total = 0
    sd = {"p99_us": [], "p50_us": []}
    for c in cells:
        p99s = [float(runs[k]["p99_us"]) for k in runs if k[1:4] == c]
        med = statistics.median(p99s)
        spikes += sum(v > 3 * med for v in p99s)
        for k in runs:
            if k[1:4] == c:
                total += 1
                ex = runs[k].get("extras", "")
                for kv in ex.split(";"):
                    if kv.startswith("loadgen_lag_max_us="):
                        lag += float(kv.split("=")[1]) > 1000
        for m in sd:
            lr = [math.log(float(runs[("results",) + c + (r,)][m]) / float(runs[("base",) + c + (r,)][m]))
                  for r in range(20) if ("results",) + c + (r,) in runs and ("base",) + c + (r,) in runs]
            if len(lr) > 2:
                sd[m].append(statistics.stdev(lr))
    print(f"{d}: false alarms {plant['false_alarms']} of {plant['comparisons']}; "
          f"p99 > 3x cell median {spikes}/{total} runs; loadgen lag > 1 ms {lag}/{total}; "
          f"median sd of log ratio p99 {statistics.median(sd['p99_us']):.2f} p50 {statistics.median(sd['p50_us']):.2f}")
    for (m, ch), (h, t) in sorted(hits.items()):
        print(f"  {m} +{ch}%: {h}/{t}")
