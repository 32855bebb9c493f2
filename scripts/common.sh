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
