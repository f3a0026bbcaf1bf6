#!/bin/bash
# Runs every fuzz-* target of a -Dfuzz=true build for SECONDS each (default 20), one after the
# other, on a copy of its seed corpus (tests/fuzz/corpus/<target>, with <target>.dict when
# there is one). Exits non-zero when a target crashed, leaked, hung (10 s for one input) or did
# not run; what it found is kept in BUILD/fuzz-artifacts/<target>/. docs/fuzzing.md says how
# to run them for hours.
#
# Usage: tests/fuzz/run.sh [SECONDS] [BUILD]   (BUILD defaults to build-fuzz)
set -uo pipefail

seconds=${1:-20}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${2:-$src/build-fuzz}
[[ $build = /* ]] || build=$PWD/$build

targets=()
for exe in "$build"/tests/fuzz/fuzz-*; do
        [[ -f $exe && -x $exe ]] && targets+=("$exe")  # not meson's fuzz-*.p object directories
done
if [[ ${#targets[@]} -eq 0 ]]; then
        echo "run.sh: no fuzz targets in $build/tests/fuzz: CC=clang meson setup $build -Dfuzz=true && meson compile -C $build" >&2
        exit 2
fi

work=$(mktemp -d /tmp/hvtuned-fuzz-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=()
for exe in "${targets[@]}"; do
        target=${exe##*/fuzz-}
        corpus=$work/$target
        artifacts=$build/fuzz-artifacts/$target
        mkdir -p "$corpus" "$artifacts"
        cp "$here/corpus/$target"/* "$corpus"/ 2>/dev/null
        dict=()
        [[ -f $here/$target.dict ]] && dict=(-dict="$here/$target.dict")
        echo "== fuzz-$target: $seconds s"
        # -close_fd_mask=1: libconfig echoes what its scanner does not match to stdout.
        "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                -close_fd_mask=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$corpus" >"$work/$target.log" 2>&1
        rc=$?
        grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$target.log" | tail -1
        if [[ $rc -ne 0 ]]; then
                failed+=("fuzz-$target")
                sed -n '/==[0-9]*==ERROR\|^[^ ]*fuzz-[a-z]*\.c:[0-9]*: \|SUMMARY/p' "$work/$target.log" | head -20
                echo "fuzz-$target failed (exit $rc); log: $artifacts/run.log; inputs:" $(ls "$artifacts" | grep -v run.log)
                cp "$work/$target.log" "$artifacts/run.log"
                echo "reproduce: $exe $artifacts/<input>"
        fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
        echo "run.sh: ${failed[*]} failed" >&2
        exit 1
fi
echo "run.sh: every target ran $seconds s without a finding"
