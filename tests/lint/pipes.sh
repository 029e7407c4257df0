#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/lint/pipes.sh - no test script ends a pipeline with `grep -q`.
# The scripts run under pipefail; `X | grep -q P` then fails whenever grep
# finds P and exits before X has written its last line (bash's echo writes
# line by line): X dies of SIGPIPE, the pipeline reports "no match", and a
# check fails only on a loaded machine.  Write `grep -q P <<<"$x"`,
# `X | qgrep P` (tests/mount/lib.sh, tests/confine/lib.sh) or, in a string
# another shell runs, `X | grep P >/dev/null`.
set -u -o pipefail
SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 1
found=$(grep -rnE '(^|[^|])\|[[:space:]]*grep[[:space:]]+(-[a-zA-Z]+[[:space:]]+)*-[a-zA-Z]*q' \
	--include='*.sh' --include=run --include=demo tests cli .ci | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#')
if [ -n "$found" ]; then
	echo "FAIL: pipelines that end in grep -q (use qgrep or a here-string):"
	echo "$found" | sed 's/^/    /'
	exit 1
fi
echo "ok - no pipeline of a test script ends in grep -q"
