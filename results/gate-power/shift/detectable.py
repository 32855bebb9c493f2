# compare's detectable change per cell (80 % power at p < 0.05, before the
# correction) over the unplanted compare.json of the given DIRs: latency
# percentiles judged by the shift test, and CPU per request.
#   python3 detectable.py /tmp/gs/*/inv*
import json, statistics as st, sys

for m in ["p50_us", "p99_us", "cpu_us_per_op"]:
    ds = []
    for d in sys.argv[1:]:
        for c in json.load(open(f"{d}/compare.json"))["comparisons"]:
            if c["metric"] == m and c["detectable"] is not None and (m == "cpu_us_per_op" or c.get("shift")):
                ds.append(c["detectable"] * 100)
    print(f"{m}: {len(ds)} cells, median {st.median(ds):.1f} %, min {min(ds):.1f} %, max {max(ds):.1f} %, "
          f"above 20 %: {sum(d > 20 for d in ds)}")
