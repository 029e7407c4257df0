# SPDX-License-Identifier: Apache-2.0
#
# cli/deps/deps.sh - sourced by cli/demo and tests/run: read
# cli/deps/deps.txt, install what is missing, and run a build step so
# that a failure prints the step's own output and one line saying what failed.
# The caller sets DEPS_WHO (the prefix of its messages, e.g. "txfs demo").

DEPS_FILE=$(dirname "${BASH_SOURCE[0]}")/deps.txt

# deps_list SECTION...: the packages of those sections, one a line
deps_list() {
	local want=" $* "
	awk -v want="$want" '
		{ sub(/#.*/, ""); gsub(/[[:space:]]+/, "") }
		/^\[.*\]$/ { sec = substr($0, 2, length($0) - 2); next }
		$0 != "" && index(want, " " sec " ") { print }' "$DEPS_FILE"
}

# deps_missing SECTION...: those not installed. An entry PKG:CMD is
# satisfied by a command CMD on PATH too (npm: a node from elsewhere
# bundles its own, and Debian's npm package conflicts with it).
deps_missing() {
	local p
	for p in $(deps_list "$@"); do
		case $p in
		*:*) command -v "${p#*:}" >/dev/null 2>&1 && continue; p=${p%%:*} ;;
		esac
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || echo "$p"
	done
}

# deps_fail STEP LOG: print the step's last lines and the one-line reason
deps_fail() {
	local step=$1 log=$2 why
	echo "---- last lines of $step's output ($log) ----" >&2
	tail -n 40 "$log" >&2
	echo "----" >&2
	# the first error line says most: a compiler's "error:", apt's "E:",
	# meson's "ERROR:", else anything that looks like a failure
	why=$(grep -m1 -E 'error:|^E: |ERROR:' "$log" ||
		grep -m1 -iE 'error|unable|not found|failed|cannot' "$log")
	why=$(printf '%s' "$why" | sed 's/^[[:space:]]*//' | cut -c1-200)
	echo "$DEPS_WHO: $step failed: ${why:-see the output above}" >&2
}

# deps_as_root CMD...: run as root (sudo when not root)
deps_as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# deps_install SECTION...: install the missing packages; on failure print
# apt's output and return 1
deps_install() {
	local missing log
	missing=$(deps_missing "$@" | tr '\n' ' ')
	[ -n "${missing// /}" ] || return 0
	echo "installing: $missing"
	log=$(mktemp /tmp/txfs-install.XXXXXX)
	if ! { deps_as_root apt-get install -y -q --no-install-recommends $missing >"$log" 2>&1 ||
		{ deps_as_root apt-get update -q >>"$log" 2>&1 &&
		  deps_as_root apt-get install -y -q --no-install-recommends $missing >>"$log" 2>&1; }; }; then
		deps_fail "installing packages ($missing)" "$log"
		return 1
	fi
	rm -f "$log"
}

# deps_step NAME CMD...: run a build step quietly; on failure print its
# output and the reason, return its status
deps_step() {
	local name=$1 log rc
	shift
	log=$(mktemp /tmp/txfs-step.XXXXXX)
	"$@" >"$log" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		deps_fail "$name" "$log"
		return $rc
	fi
	rm -f "$log"
}
