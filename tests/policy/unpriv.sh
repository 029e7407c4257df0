# SPDX-License-Identifier: Apache-2.0
# unpriv.sh - sourced by a policy scenario after plib.sh, before it
# mounts: when run as root, the same scenario runs again, first, as the
# unprivileged user $TXFS_TEST_USER (default txfstest; /dev/fuse made
# 0666 if needed), in its own temp folder (under tests/run's base when it
# set one: TXFS_TEST_TMP, 1777), with the pass's TXFS_TEST_MOUNT_OPTS; its
# checks count here, with "[txfstest]" before each line. Then the
# scenario goes on as root. Skipped (said) when the user does not exist or
# runuser is missing. Also sourced by scenarios outside tests/policy
# (tests/txn/mmap_rollback.sh): it needs is_root, t, ok, fail and $T.
if is_root && [ -z "${TXFS_UNPRIV_HALF:-}" ]; then
	UNPRIV_USER=${TXFS_TEST_USER:-txfstest}
	if id "$UNPRIV_USER" >/dev/null 2>&1 && command -v runuser >/dev/null; then
		[ -e /dev/fuse ] && [ "$(stat -c %a /dev/fuse)" != 666 ] && chmod 666 /dev/fuse
		UNPRIV_PY=${PYTHON:-}
		runuser -u "$UNPRIV_USER" -- test -x "$UNPRIV_PY" 2>/dev/null || UNPRIV_PY=/usr/bin/python3
		echo "# ---- as $UNPRIV_USER (unprivileged)"
		UNPRIV_TMP=$(printenv TXFS_TEST_TMP)
		t 600 runuser -u "$UNPRIV_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
			LC_ALL=C TXFS="$TXFS" TXFS_TOOLS="$TXFS_TOOLS" TXFS_SRC="${TXFS_SRC:-}" \
			${UNPRIV_TMP:+TXFS_TEST_TMP="$UNPRIV_TMP"} \
			${TXFS_TEST_MOUNT_OPTS:+TXFS_TEST_MOUNT_OPTS="$TXFS_TEST_MOUNT_OPTS"} \
			TXFS_PYTHON="$UNPRIV_PY" TXFS_UNPRIV_HALF=1 HOME=/nonexistent \
			bash "$0" >"$T/unpriv.out" 2>&1
		UNPRIV_RC=$?
		sed "s/^/[$UNPRIV_USER] /" "$T/unpriv.out"
		if [ "$UNPRIV_RC" = 0 ]; then
			ok "the unprivileged half passed"
		else
			fail "the unprivileged half failed (exit $UNPRIV_RC)"
		fi
		echo "# ---- as root"
	else
		echo "# no user $UNPRIV_USER or no runuser: the unprivileged half is not run"
	fi
fi
