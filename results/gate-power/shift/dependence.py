# The runs' and the pairs' dependence in time, per cell and percentile, averaged over
# the invocations analyze.sh unpacks: lag-1 and lag-2 autocorrelation of the runs' log
# value in the order they ran (base, current, current, base, ...), and lag-1 of the
# pairs' log ratios (independent pairs give about -1/20).
#   python3 dependence.py /tmp/gs/*/inv*
import csv, sys, math, statistics as st
import numpy as np
from collections import defaultdict
dirs=sys.argv[1:]
res=defaultdict(list)
for d in dirs:
    runs=defaultdict(dict)
    for side,f in (("b","base.csv"),("c","results.csv")):
        for r in csv.DictReader(open(f"{d}/{f}")):
            if r["status"]!="ok": continue
            runs[(r["scheduler"],r["workers"],r["workload"])][(side,int(r["run"]))]=r
    for cell,rr in runs.items():
        for m in ("p50_us","p90_us","p99_us"):
            try:
                seq=[]
                for k in range(20):
                    order=[("b",k),("c",k)] if k%2==0 else [("c",k),("b",k)]
                    seq+= [math.log(float(rr[o][m])) for o in order]
                d_=[math.log(float(rr[("c",k)][m]))-math.log(float(rr[("b",k)][m])) for k in range(20)]
            except (KeyError,ValueError): continue
            x=np.array(seq); x=x-x.mean()
            r1=(x[:-1]*x[1:]).sum()/(x*x).sum()
            r2=(x[:-2]*x[2:]).sum()/(x*x).sum()
            y=np.array(d_); y=y-y.mean()
            dd=(y[:-1]*y[1:]).sum()/(y*y).sum()
            res[(cell[0]+" x"+cell[1], m)].append((r1,r2,dd))
for key in sorted(res):
    a=np.array(res[key])
    print(f"{key[0]:16s} {key[1]:7s} runs' lag1 {a[:,0].mean():+.2f} lag2 {a[:,1].mean():+.2f}  pairs' d lag1 {a[:,2].mean():+.2f}  (n={len(a)})")
