# As run on the first two invocations (compare --hdr-dir JSON as /tmp/q37/c1.json, c2.json): per-run p99
# tests (Wilcoxon, sign-flip of the median log ratio, t) in the gate's family, planted +10/20/30 %.
import csv, json, math, sys
import numpy as np
from scipy import stats
def bh(ps):
    ps = np.array(ps); m = len(ps); order = np.argsort(ps); q = np.empty(m); prev = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]; prev = min(prev, ps[j] * m / (i + 1)); q[j] = prev
    return q
for inv in sys.argv[1:]:
    comp = json.load(open(f'/tmp/q37/{inv}.json'))['comparisons']
    fam = {(c['cell']['scheduler'], str(c['cell']['workers']), c['cell']['workload'], c['metric']): c['p_value'] for c in comp if c['p_value'] is not None}
    rows = {}
    for side in ('base', 'results'):
        for x in csv.DictReader(open(f'/tmp/q37/inv{inv[-1]}/{side}.csv')):
            rows[(side, x['scheduler'], x['workers'], x['workload'], int(x['run']))] = float(x['p99_us'])
    cells = sorted({k[1:4] for k in rows})
    lr = {c: np.array([math.log(rows[('results',)+c+(r,)]/rows[('base',)+c+(r,)]) for r in range(20)]) for c in cells}
    for name, test in [('wilcoxon', lambda d: stats.wilcoxon(d).pvalue), ('signflip-median', None), ('t', lambda d: stats.ttest_1samp(d,0).pvalue)]:
        flagged = {0.1:0, 0.2:0, 0.3:0}
        for ch in flagged:
            for c in cells:
                d = lr[c] + math.log(1+ch)
                if name == 'signflip-median':
                    rng = np.random.default_rng(1); obs = abs(np.median(d))
                    S = rng.choice([-1,1], size=(20000, 20)); hits = np.sum(np.abs(np.median(S*d, axis=1)) >= obs-1e-12)
                    p = (1+hits)/20001
                else:
                    p = test(d)
                keys = list(fam); ps = [fam[k] for k in keys]
                i = keys.index(c + ('p99_us',)); ps[i] = p
                q = bh(ps)[i]
                flagged[ch] += (p < 0.05 and q < 0.05)
        print(inv, name, flagged)
