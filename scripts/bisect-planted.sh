#!/usr/bin/env bash
# `wsbench bisect` on a planted regression, full form (nightly; the short
# form, with cached binaries, is harness/tests/bisect.rs).
#
#   scripts/bisect-planted.sh [WORK_DIR]
#
# Makes a git repository from this workspace's HEAD (git archive) in WORK_DIR
# (default target/bisect-planted) with 8 commits:
#   c0  the workspace as it is                       (good end)
#   c1, c2, c3  a line added to PLANTED.md each      (good)
#   c4  a spin of 2000 spin_loop() hints at the top of steal-half's next_task
#       (the policy's hot path: every poll of every worker goes through it)
#   c5  compile_error! in the harness: does not build (skipped)
#   c6  the compile_error! removed again             (bad: the spin is there)
#   c7  a line added to PLANTED.md                   (bad end)
# and bisects it from the repository's root:
#   wsbench bisect --good c0 --bad c7 --sched steal-half --workers 2
#                  --workload yield-many --json WORK_DIR/bisect.json
# Every visited commit is built in a worktree under WORK_DIR/target/ (one
# shared target directory, seeded from this workspace's target/release
# when there is one, so only what a commit changes is compiled again).
# Expected: "first bad: <c4> c4: plant a spin", exit 0. Prints the result
# and the time it took; exit status: bisect's.
#
# Environment: WSBENCH_BIN (the wsbench that bisects; default: cargo build
# --release); BISECT_ARGS (extra bisect options, e.g. "--max-runs 10").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

root=$(pwd)
work=${1:-$root/target/bisect-planted}
bin=$(wsbench_bin)
rm -rf "$work"
mkdir -p "$work"
git archive HEAD | tar -x -C "$work"
cd "$work"
g() { git -c user.name=wsbench -c user.email=wsbench@example.invalid -c commit.gpgsign=false "$@"; }
g init -q -b main
grep -qx 'target/' .gitignore 2>/dev/null || echo 'target/' >> .gitignore
commit() { g add -A && g commit -q -m "$1"; }
note() { echo "$1" >> PLANTED.md; commit "$1"; }
commit "c0: the workspace"
note "c1: a note"
note "c2: a note"
note "c3: a note"
python3 - << 'PY'
path = "schedulers/src/policies/steal_half/mod.rs"
text = open(path).read()
anchor = "fn next_task(&self, core: &mut Core<Q>, w: &WorkerRef<'_>) -> Option<Notified> {\n"
assert anchor in text, "steal-half's next_task moved; update the plant"
spin = "        for _ in 0..2000 {\n            std::hint::spin_loop();\n        }\n"
open(path, "w").write(text.replace(anchor, anchor + spin, 1))
PY
commit "c4: plant a spin"
cp harness/src/lib.rs "$work/lib.rs.orig"
echo 'compile_error!("planted: this commit does not build");' >> harness/src/lib.rs
commit "c5: does not build"
cp "$work/lib.rs.orig" harness/src/lib.rs
rm "$work/lib.rs.orig"
commit "c6: builds again"
note "c7: a note"

shas=($(g log --reverse --format=%H))
# Seed the shared target directory: the dependencies are compiled once.
if [ -d "$root/target/release" ] && [ ! -d target/wsbench-bisect/target/release ]; then
    mkdir -p target/wsbench-bisect/target
    cp -r "$root/target/release" target/wsbench-bisect/target/release
fi
start=$(date +%s)
set +e
# shellcheck disable=SC2086
"$bin" bisect --good "${shas[0]}" --bad "${shas[7]}" --sched steal-half --workers 2 --workload yield-many \
    --json "$work/bisect.json" ${BISECT_ARGS:-}
code=$?
set -e
echo "bisect exit $code after $(( $(date +%s) - start )) s; planted: ${shas[4]:0:10} (c4); JSON: $work/bisect.json"
exit $code
