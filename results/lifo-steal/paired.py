# Paired ratios (run i of a cell over run i of steal-half defaults, interleaved
# neighbours): median (min-max), for steal-half on,4 and bwos.
# Usage: python3 paired.py workers2.csv
import csv, sys, statistics as st
rows=[r for r in csv.DictReader(open(sys.argv[1])) if r['status']=='ok']
def f(x): return float(x) if x not in ('',None) else None
cells={}
for r in rows: cells.setdefault((r['workload'],r['scheduler'],r['knobs']),{})[int(r['run'])]=r
base=('steal-half','lifo-steal=off;steal-passes=1')
for var in [('steal-half','lifo-steal=on;steal-passes=4'),('bwos','lifo-steal=off;steal-passes=1')]:
  print("\n###", var)
  print("| workload | thr | p99 | cpu/op | wake/op | base thr spread | var thr spread |")
  wls=[]
  for k in cells:
    if k[0] not in wls: wls.append(k[0])
  for w in wls:
    b=cells[(w,)+base]; v=cells[(w,)+var]
    out=[]
    for col in ['throughput_per_s','p99_us','cpu_us_per_op','wakeups_per_op']:
      rs=[f(v[i][col])/f(b[i][col]) for i in b if i in v and f(b[i][col])]
      out.append(f"{st.median(rs):.2f} ({min(rs):.2f}–{max(rs):.2f})" if rs else "–")
    def spread(c):
      t=[f(c[i]['throughput_per_s']) for i in c]; return (max(t)-min(t))/st.median(t)
    print(f"| {w} | "+" | ".join(out)+f" | {spread(b):.0%} | {spread(v):.0%} |")
