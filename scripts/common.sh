# Shell helpers shared by nightly.sh and scaling.sh (sourced, not run).

# A name made safe for a file name: lower case, runs of anything else -> '-'.
slug() { tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }

# Prints the wsbench binary to use: $WSBENCH_BIN if set, else a fresh
# release build's (its progress goes to stderr; a failed build returns
# non-zero, which `bin=$(wsbench_bin)` under set -e turns into an exit).
wsbench_bin() {
    if [ -n "${WSBENCH_BIN:-}" ]; then
        echo "$WSBENCH_BIN"
    else
        cargo build --release -p wsbench >&2 || return
        echo "$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/wsbench"
    fi
}

# round_medians FILE NAME... : FILE holds one line per round and key, the key
# first, then one value per NAME (NAME[0] names the key). Prints, per key in
# first-seen order, the median of every value column over the rounds; a NAME
# ending in '+range' also gets its min..max. (wrk-check.sh, client-bias.sh)
round_medians() {
    python3 - "$@" << 'PY'
import statistics, sys
path, names = sys.argv[1], sys.argv[2:]
rows = [l.split() for l in open(path)]
keys = list(dict.fromkeys(r[0] for r in rows))
print(f"medians over {len(rows) // len(keys)} rounds:")
head = [f"{names[0]:<12}"]
for n in names[1:]:
    head.append(f"{n.removesuffix('+range'):>14}")
    if n.endswith("+range"):
        head.append(f"{'min..max':>16}")
print(" ".join(head))
for k in keys:
    sel = [r for r in rows if r[0] == k]
    out = [f"{k:<12}"]
    for i, n in enumerate(names[1:], 1):
        vals = [float(r[i]) for r in sel]
        out.append(f"{statistics.median(vals):14.2f}")
        if n.endswith("+range"):
            out.append(f"{min(vals):7.2f}..{max(vals):<7.2f}")
    print(" ".join(out))
PY
}
