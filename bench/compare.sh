#!/usr/bin/env bash
# The honest before/after of a change: one benchmark run alternately on a landed commit and on
# the working tree, in one session, on the same machine and venv.
#
#   bench/compare.sh [-n N] REF BENCH [BENCH ARGS…]
#   e.g. bench/compare.sh HEAD~5 bench/flows.py --tasks 200
#
# REF is checked out into a temporary git worktree (removed at the end). Both sides run the
# working tree's benchmark script (so they print the same keys) with the same venv; only
# PYTHONPATH differs: REF's src/ or the working tree's src/. The runs alternate (REF, tree;
# then tree, REF; …) N times (default 3), so a machine that gets busier or quieter during the
# session weighs on both sides alike. Prints every numeric figure of the JSON lines side by
# side: the median of each side and the median of the pairs' ratios (tree / REF).
set -euo pipefail

n=3
if [[ "${1:-}" == "-n" ]]; then n="$2"; shift 2; fi
if [[ $# -lt 2 ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
ref="$1"; shift
bench="$1"; shift

root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
python="${PYTHON:-$root/.venv/bin/python}"
bench_path="$(realpath "$bench")"
commit="$(git -C "$root" rev-parse --verify "$ref^{commit}")"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/statewright-compare-XXXXXX")"
cleanup() {
    git -C "$root" worktree remove --force "$tmp/ref" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --detach --quiet "$tmp/ref" "$commit"

run() {  # run SIDE SRC I
    local side="$1" src="$2" i="$3" out="$tmp/$1.$3.json"
    shift 3
    local where
    where="$(PYTHONPATH="$src" "$python" -c 'import statewright, sys; sys.stdout.write(statewright.__file__)')"
    case "$where" in "$src"/*) ;; *) echo "compare: $side imports statewright from $where, not $src" >&2; exit 1;; esac
    echo "compare: run $i/$n on $side" >&2
    (cd "$root" && PYTHONPATH="$src${PYTHONPATH:+:$PYTHONPATH}" "$python" "$bench_path" "$@") \
        > "$tmp/$side.$i.out"
    tail -n 1 "$tmp/$side.$i.out" > "$out"
}

for ((i = 1; i <= n; i++)); do
    if (( i % 2 )); then
        run ref "$tmp/ref/src" "$i" "$@"; run tree "$root/src" "$i" "$@"
    else
        run tree "$root/src" "$i" "$@"; run ref "$tmp/ref/src" "$i" "$@"
    fi
done
echo "# $(basename "$bench") $* - REF $ref ($(git -C "$root" log -1 --format='%h %s' "$commit" | cut -c1-60)) vs the working tree, $n pairs"
"$python" "$root/bench/_compare.py" "$tmp" "$n"
