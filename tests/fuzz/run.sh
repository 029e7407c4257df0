#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/fuzz/run.sh [SECONDS] - build the policy fuzz targets (the parser,
# the glob matcher, the audit log's byte strings) with clang
# (-fsanitize=fuzzer,address,undefined) in build-fuzz/ and run each for
# SECONDS (default 30) from a copy of its committed seed corpus.
#
# Prints one line per target, "ok   NAME: ..." or "FAIL NAME: ...", and
# exits non-zero if a target did not build or found a crash (the input
# that crashed is kept in build-fuzz/NAME.crash/ and its report in
# build-fuzz/NAME.log). Environment: CC (clang), FUZZ_BUILD (build-fuzz).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-30}
CC=${CC:-clang}
OUT=${FUZZ_BUILD:-$ROOT/build-fuzz}
TARGETS=(fuzz_policy_parser fuzz_policy_glob fuzz_policy_audit)

mkdir -p "$OUT" || exit 1
python3 "$ROOT/policy/embed.py" "$ROOT/policy/default.policy" \
	"$OUT/default_policy.c" || exit 1

# The policy library links jansson (the audit log); its flags from
# pkg-config, as meson takes them.
# (an array: pkg-config prints several flags)
flags=$(pkg-config --cflags --libs jansson 2>/dev/null) || flags=-ljansson
read -r -a JANSSON <<<"$flags"

# every source of the policy library (policy/meson.build lists the same)
build() {
	"$CC" -std=c17 -g -O1 -D_GNU_SOURCE -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I"$ROOT/policy" -o "$OUT/$1" "$ROOT/tests/fuzz/$1.c" \
		"$ROOT"/policy/*.c \
		"$OUT/default_policy.c" "${JANSSON[@]}" -lpthread \
		>"$OUT/$1.build.log" 2>&1
}

run() {
	local t=$1 corpus=$OUT/$1.corpus crashes=$OUT/$1.crash
	rm -rf "$corpus" "$crashes"
	mkdir -p "$corpus" "$crashes"
	cp "$ROOT/tests/fuzz/corpus/${t#fuzz_policy_}"/* "$corpus"/ 2>/dev/null
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$OUT/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
		-max_len=4096 -artifact_prefix="$crashes/" -print_final_stats=1 \
		"$corpus" >"$OUT/$t.log" 2>&1
}

fails=0
for t in "${TARGETS[@]}"; do
	if ! build "$t"; then
		echo "FAIL $t: does not build (see $OUT/$t.build.log)"
		fails=$((fails + 1))
		continue
	fi
	if run "$t"; then
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' \
			"$OUT/$t.log" | grep -o '[0-9]*$')
		echo "ok   $t: ${runs:-?} inputs in ${SECS} s, no crash"
	else
		echo "FAIL $t: crashed, input in $OUT/$t.crash/, report in $OUT/$t.log"
		fails=$((fails + 1))
	fi
done
exit $((fails > 0))
