# Ratios of medians to steal-half (defaults) per workload, from a wsbench CSV of
# --sched steal-half,bwos --knob lifo-steal=off,on --knob steal-passes=1,4.
# Usage: python3 ratios.py workers2.csv
import csv, sys, statistics as st
rows=[r for r in csv.DictReader(open(sys.argv[1]))]
bad=[r for r in rows if r['status']!='ok']
ok=[r for r in rows if r['status']=='ok']
def f(x): return float(x) if x not in ('',None) else None
cells={}
for r in ok:
    k=(r['workload'],r['scheduler'],r['knobs'])
    cells.setdefault(k,[]).append(r)
def med(rs,key):
    v=[key(r) for r in rs]; v=[x for x in v if x is not None]
    return st.median(v) if v else None
metrics={
 'thr':lambda r:f(r['throughput_per_s']),
 'p99':lambda r:f(r['p99_us']),
 'cpu':lambda r:f(r['cpu_us_per_op']),
 'wk':lambda r:f(r['wakeups_per_op']),
 'spur':lambda r:(f(r['spurious_unparks'])/f(r['ops'])) if f(r['ops']) else None,
 'ls':lambda r:(f(r['lifo_steals'])/f(r['ops'])) if f(r['ops']) else None,
}
base=('steal-half','lifo-steal=off;steal-passes=1')
order=[('steal-half','lifo-steal=on;steal-passes=4'),('steal-half','lifo-steal=on;steal-passes=1'),('steal-half','lifo-steal=off;steal-passes=4'),('bwos','lifo-steal=off;steal-passes=1'),('bwos','lifo-steal=on;steal-passes=4')]
wls=[]
for (w,s,k) in cells:
    if w not in wls: wls.append(w)
print(f"rows {len(rows)}, failed {len(bad)}: {[ (r['workload'],r['scheduler'],r['knobs'],r['error'][:60]) for r in bad]}")
print("runs per cell:", sorted(set(len(v) for v in cells.values())))
short={'steal-half|lifo-steal=on;steal-passes=4':'sh on,4','steal-half|lifo-steal=on;steal-passes=1':'sh on,1','steal-half|lifo-steal=off;steal-passes=4':'sh off,4','bwos|lifo-steal=off;steal-passes=1':'bwos','bwos|lifo-steal=on;steal-passes=4':'bwos on,4'}
for m in ['thr','p99','cpu','wk']:
    print(f"\n## {m}: ratio of medians to steal-half (defaults); base median in 1st col")
    print("| workload | base | "+" | ".join(short[s+'|'+k] for s,k in order)+" |")
    for w in wls:
        b=med(cells.get((w,)+base,[]),metrics[m])
        out=[]
        for s,k in order:
            c=med(cells.get((w,s,k),[]),metrics[m])
            out.append(f"{c/b:.2f}" if (c is not None and b) else ("–" if c is None else f"{c:.3g}/0"))
        print(f"| {w} | {b:.4g} | "+" | ".join(out)+" |" if b is not None else f"| {w} | – | "+" | ".join(out)+" |")
print("\n## absolute medians: wakeups/op, spurious unparks/op, lifo_steals/op")
for w in wls:
    line=[w]
    for s,k in [base]+order:
        rs=cells.get((w,s,k),[])
        line.append("%s/%s/%s"%tuple(("%.3g"%x if x is not None else "–") for x in (med(rs,metrics['wk']),med(rs,metrics['spur']),med(rs,metrics['ls']))))
    print(" | ".join(line))
