# compare's detectable change per cell (80 % power at p < 0.05, before the
# correction) over the unplanted compare.json of the given DIRs: latency
# percentiles judged by the shift test, and CPU per request (and throughput,
# with METRICS) judged by the t-test.
#   python3 detectable.py /tmp/gs/*/inv*
#   METRICS="throughput_per_s cpu_us_per_op" python3 detectable.py DIR...
import json, os, statistics as st, sys

T_TESTED = {"cpu_us_per_op", "throughput_per_s"}
for m in os.environ.get("METRICS", "p50_us p99_us cpu_us_per_op").split():
    ds = []
    for d in sys.argv[1:]:
        for c in json.load(open(f"{d}/compare.json"))["comparisons"]:
            if c["metric"] == m and c["detectable"] is not None and (m in T_TESTED or c.get("shift")):
                ds.append(c["detectable"] * 100)
    print(f"{m}: {len(ds)} cells, median {st.median(ds):.1f} %, min {min(ds):.1f} %, max {max(ds):.1f} %, "
          f"above 20 %: {sum(d > 20 for d in ds)}")
