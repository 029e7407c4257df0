#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_ctl_orphan - issue 23 hole 1: processes a command of `txfs exec`
# leaves behind stay refused every .txfs/ctl verb after txfs exec itself
# is SIGKILLed (the daemon knows them by their process group, which the
# confinement does not let them leave: fs/session/exectree.c). As root and
# as the unprivileged test user, a command writes README.md and new.txt in
# a git workspace and starts four survivors:
#   - setsid: python os.setsid() (must fail: EPERM), then setpgid, then
#     a fork whose child waits (re-parented to init when its parent goes);
#   - a double fork (sh -c "(sh ... &)"), re-parented out of the tree;
#   - a thread of a daemonised python process;
#   - a process that opened .txfs/ctl for writing before the kill;
# txfs exec is SIGKILLed from outside; then each survivor writes commit,
# rollback, "savepoint evil" and "release cmd-1" to .txfs/ctl. None may
# get through: the real directory stays byte-identical (nothing
# committed), `git fsck` is clean, the agent itself can still roll back
# through .txfs/ctl, a new txfs exec runs, the workspace unmounts and
# mounts again. The survivors are killed by pid.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

# The survivors, written to $RES before the command runs.
# surv.sh FORM [FD]: record its pid, wait for $GO, then each verb to
# .txfs/ctl (or to the open FD), one result line each in $RES/FORM.
write_survivors() {
	cat >"$RES/surv.sh" <<'EOF'
echo $$ >> "$RES/pids"
while [ ! -e "$GO" ]; do sleep 0.1; done
for v in commit rollback "savepoint evil" "release cmd-1"; do
	if [ -n "$2" ]; then (echo "$v" >&"$2") 2>/dev/null
	else (echo "$v" > .txfs/ctl) 2>/dev/null; fi &&
		echo "ESCAPED-$1-$v" >>"$RES/$1" || echo "refused-$1-$v" >>"$RES/$1"
done
EOF
	cat >"$RES/setsid.py" <<'EOF'
import os
res = os.environ["RES"]
for name, f in (("setsid", os.setsid), ("setpgid", lambda: os.setpgid(0, 0))):
    try:
        f()
        r = "ESCAPED-" + name + "-call"
    except OSError as e:
        r = name + "-refused-" + str(e.errno)
    open(res + "/calls", "a").write(r + "\n")
if os.fork() == 0:
    if os.fork() == 0:
        os.execvp("bash", ["bash", res + "/surv.sh", "setsid"])
    os._exit(0)
os.wait()
EOF
	cat >"$RES/thread.py" <<'EOF'
import os, threading, time
res = os.environ["RES"]
def w():
    while not os.path.exists(os.environ["GO"]):
        time.sleep(0.1)
    for v in ("commit", "rollback", "savepoint evil", "release cmd-1"):
        try:
            with open(".txfs/ctl", "w") as f:
                f.write(v)
            r = "ESCAPED-thread-" + v
        except OSError:
            r = "refused-thread-" + v
        open(res + "/thread", "a").write(r + "\n")
if os.fork() == 0:
    if os.fork() == 0:
        open(res + "/pids", "a").write("%d\n" % os.getpid())
        t = threading.Thread(target=w)
        t.start()
        t.join()
    os._exit(0)
os.wait()
EOF
	chmod 644 "$RES"/surv.sh "$RES"/*.py
}

CMD='echo changed > README.md; echo x > new.txt
"$PY" "$RES/setsid.py"
sh -c "(bash \"\$RES/surv.sh\" double &)"
"$PY" "$RES/thread.py"
(exec 9>.txfs/ctl; exec bash "$RES/surv.sh" prefd 9) &
while [ "$(wc -l < "$RES/pids")" -lt 4 ]; do sleep 0.1; done
echo STARTED > "$RES/started"
exec sleep 300'

# The survivors (by the pids they wrote) and $RES go, whatever happened.
drop_res() {
	local p
	[ -n "${RES:-}" ] && [ -d "$RES" ] || return 0
	for p in $(cat "$RES/pids" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$RES"
}

body() {
	local real pid i p n
	git_ws
	real=$(snap "$WS")
	mount_ws
	RES=$(mktemp -d /tmp/txfs-orphan.XXXXXX) && [ -d "$RES" ] ||
		{ fail "mktemp: no folder for the survivors"; return 1; }
	GO=$RES/go
	chmod 777 "$RES"
	: >"$RES/pids"
	chmod 666 "$RES/pids"
	write_survivors
	timeout -k 5 120 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LC_ALL=C PY="$PY" RES="$RES" GO="$GO" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$TXFS_BIN" exec --json -- bash -c "$CMD" "orphan-$$-$SEQ" </dev/null \
		>"$T/orph.out" 2>"$T/orph.err" &
	BG_PIDS+=("$!")
	for i in $(seq 300); do [ -e "$RES/started" ] && break; sleep 0.1; done
	[ -e "$RES/started" ] || fail "[$WHO] the survivors did not start: $(head -c 400 "$T/orph.err")"
	pid=
	# ours: the same test of another pass may run at the same time
	for p in $(pgrep -f "exec --json -- bash -c echo changed.* orphan-$$-$SEQ"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = txfs ] && pid=$p
	done
	[ -n "$pid" ] || { fail "[$WHO] txfs exec not found"; drop_res; return; }
	kill -KILL "$pid"
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "[$WHO] txfs exec outlived SIGKILL"
	touch "$GO"
	for i in $(seq 300); do
		n=$(cat "$RES"/setsid "$RES"/double "$RES"/thread "$RES"/prefd 2>/dev/null | wc -l)
		[ "$n" -ge 16 ] && break
		sleep 0.1
	done
	check_eq "[$WHO] the four survivors tried the four verbs" 16 "$n"
	if cat "$RES"/setsid "$RES"/double "$RES"/thread "$RES"/prefd "$RES"/calls 2>/dev/null | qgrep ESCAPED; then
		fail "[$WHO] got through after txfs exec was killed: $(cat "$RES"/setsid "$RES"/double "$RES"/thread "$RES"/prefd "$RES"/calls | grep ESCAPED | tr '\n' ' ')"
	else
		ok "[$WHO] setsid/double-fork/thread/pre-opened survivors: 16 verbs refused"
	fi
	grep -q "setsid-refused-1" "$RES/calls" && grep -q "setpgid-refused-1" "$RES/calls" &&
		ok "[$WHO] setsid and setpgid refused (EPERM) in the command" ||
		fail "[$WHO] setsid/setpgid: $(cat "$RES/calls" 2>/dev/null)"
	audit_has '"event":"veto","op":"control","path":"commit"' &&
		ok "[$WHO] the refusals are vetoes in the audit log" ||
		fail "[$WHO] no control veto in the audit log"
	# the agent itself (not in the group) still may roll back
	as_run sh -c "echo rollback > '$WS/.txfs/ctl'" ||
		fail "[$WHO] the agent's own rollback through .txfs/ctl was refused"
	as_run test -e "$WS/new.txt" && fail "[$WHO] new.txt still in the view after the agent's rollback" ||
		ok "[$WHO] the agent's own rollback works while the survivors live"
	ag_exec -- sh -c 'echo y > after.txt'
	check_eq "[$WHO] a new txfs exec runs and keeps" kept "$(jget outcome)"
	for p in $(cat "$RES/pids"); do kill -KILL "$p" 2>/dev/null; done
	for p in $(cat "$RES/pids"); do
		for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	: >"$RES/pids"	# killed: never signal those numbers again
	echo rollback | as_run tee "$WS/.txfs/ctl" >/dev/null
	umount_ws
	check_snap "[$WHO] the real directory is byte-identical" "$real" "$(snap "$WS")"
	(cd "$WS" && "${AS[@]}" git fsck --strict >/dev/null 2>&1) &&
		ok "[$WHO] git fsck is clean" || fail "[$WHO] git fsck failed"
	mount_ws
	as_run cat "$WS/README.md" | qgrep '^# demo' && ok "[$WHO] mounts again, README.md intact" ||
		fail "[$WHO] remount: README.md wrong"
	umount_ws
	drop_res
}

for_each_user body
finish
