# SPDX-License-Identifier: Apache-2.0
# plib.sh - sourced by every policy scenario (tests/policy/*.sh), after
# ../mount/lib.sh (whose fixture, txfs_mount, t, check_eq, finish ... it
# uses). It adds what the policy tests need:
#
#   use_policy NAME <<'EOF' ... EOF   write $T/NAME.policy, mount with it
#   default_policy                    mount with the built-in default
#   in_mnt 'script'                   run a shell step with cwd $MNT
#   refused WHAT 'script' [REGEX]     the step fails (exit != 0) and its
#                                     output matches REGEX (default:
#                                     "Permission denied")
#   allowed WHAT 'script'             the step exits 0
#   py WHAT EXPECT PYOP-ARGS...       tests/policy/pyop.py in $MNT; EXPECT
#                                     is ok, an errno name (EACCES ...) or
#                                     fail (any errno)
#   log_veto WHAT OP PATH LINE [ERRNO] .txfs/log has a veto of OP on PATH by
#                                     rule $TXFS_POLICY:LINE, with ERRNO
#                                     (EACCES), pid, uid and exe
#   log_guard WHAT LIMIT              a "guard" event for LIMIT with a hint
#   log_wellformed                    every line of .txfs/log is JSON, and
#                                     every veto/guard record is complete
#   view_hash DIR                     hash of the listing of DIR (contents,
#                                     modes, owners, mtimes, xattrs)
#
# The policy itself is what these tests test: lib.sh's rule-less policy is
# replaced before every mount.

PLIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYOP=$PLIB_DIR/pyop.py
LOGCHECK=$PLIB_DIR/logcheck.py
PYTHON=${TXFS_PYTHON:-python3}
export PYTHON PYOP LOGCHECK

use_policy() {
	cat >"$T/$1.policy"
	TXFS_POLICY=$T/$1.policy
}

default_policy() {
	TXFS_POLICY=
}

in_mnt() {
	(cd "$MNT" && timeout -k 5 60 bash -c "$1")
}

refused() {
	local what=$1 script=$2 re=${3-Permission denied} rc
	in_mnt "$script" >"$T/step.out" 2>&1
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "$what: timeout: '$script'"
	elif [ $rc = 0 ]; then
		fail "$what: expected '$script' to be refused got exit 0 ($(head -c 300 "$T/step.out"))"
	elif [ -n "$re" ] && ! grep -Eq "$re" "$T/step.out"; then
		fail "$what: '$script' failed (exit $rc) but not with /$re/: $(head -c 300 "$T/step.out")"
	else
		ok "$what (refused)"
	fi
}

allowed() {
	local what=$1 script=$2 rc
	in_mnt "$script" >"$T/step.out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		ok "$what"
	else
		fail "$what: expected '$script' to succeed got exit $rc: $(head -c 400 "$T/step.out")"
	fi
	return $rc
}

py() {
	local what=$1 want=$2 out got
	shift 2
	out=$(cd "$MNT" && timeout -k 5 30 "$PYTHON" "$PYOP" "$@" 2>&1)
	got=${out%%:*}
	got=${got%%$'\n'*}
	if [ "$got" = "$want" ] || { [ "$want" = fail ] && [[ $got =~ ^E[A-Z0-9]+$ ]]; }; then
		ok "$what ($got)"
	else
		fail "$what: pyop $*: expected $want got ${out:-nothing}"
	fi
}

log_veto() {
	local what=$1 op=$2 path=$3 line=$4 err=${5:-EACCES}
	if t 30 "$PYTHON" "$LOGCHECK" "$MNT/.txfs/log" veto "$op" "$path" "$line" "$err" \
		"$TXFS_POLICY" "$(id -u)" >"$T/log.out" 2>&1; then
		ok "$what: logged ($(cat "$T/log.out"))"
	else
		fail "$what: $(cat "$T/log.out")"
	fi
}

log_guard() {
	if t 30 "$PYTHON" "$LOGCHECK" "$MNT/.txfs/log" guard "$2" "$TXFS_POLICY" >"$T/log.out" 2>&1; then
		ok "$1: guard event logged ($(cat "$T/log.out"))"
	else
		fail "$1: $(cat "$T/log.out")"
	fi
}

log_wellformed() {
	if t 30 "$PYTHON" "$LOGCHECK" "$MNT/.txfs/log" wellformed "$(id -u)" >"$T/log.out" 2>&1; then
		ok "every record of .txfs/log is a complete JSON line ($(cat "$T/log.out"))"
	else
		fail ".txfs/log: $(cat "$T/log.out")"
	fi
}

# log_count EVENT: how many records of that event .txfs/log has
log_count() {
	t 30 "$PYTHON" "$LOGCHECK" "$MNT/.txfs/log" count "$1"
}

view_hash() {
	"$FSOP" tree -mox "$1" | sha256sum | cut -c1-64
}

# status_field NAME: a field of .txfs/status.json
status_field() {
	t 30 "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$MNT/.txfs/status.json" "$1" 2>&1
}

# wait_log EVENT N: wait (10 s at most) until .txfs/log has N records of EVENT
wait_log() {
	local i
	for i in $(seq 100); do
		[ "$(log_count "$1")" -ge "$2" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

sha() {
	sha256sum <"$1" | cut -c1-64
}

# rule_line 'TEXT': the line number of the rule TEXT in $TXFS_POLICY
rule_line() {
	grep -n -x -F -- "$1" "$TXFS_POLICY" | head -1 | cut -d: -f1
}
