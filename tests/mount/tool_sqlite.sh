#!/bin/bash
# sqlite3 in the mount: 10,000 rows (one transaction, then 100 small ones)
# with the rollback journal and with WAL (shared-memory mmap), a real
# database updated and vacuumed, PRAGMA integrity_check after each and
# after a remount; and commits that returned survive a SIGKILL of the daemon.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { fail "sqlite3 is not installed"; exit 1; }
sqlite3 "$WS/real.db" "CREATE TABLE r(id INTEGER PRIMARY KEY, v TEXT);
	WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<1000) INSERT INTO r SELECT x, 'real'||x FROM c;"
txfs_mount || exit 1
q() { t 300 sqlite3 "$@" 2>&1; }
rows='WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<10000)
	INSERT INTO t SELECT x, hex(randomblob(32)), x*7 FROM c;'
check_eq "journal mode: 10,000 rows in one transaction" "ok|10000|350035000" \
	"$(q "$MNT/a.db" "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, n INTEGER); $rows
	SELECT (SELECT integrity_check FROM pragma_integrity_check) || '|' || count(*) || '|' || sum(n) FROM t;")"
small=$(for b in $(seq 0 99); do echo "BEGIN; WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<100) INSERT INTO t2 SELECT $b*100+x, randomblob(100) FROM c; COMMIT;"; done)
check_eq "journal mode: 100 transactions of 100 rows" "ok|10000" \
	"$(q "$MNT/a.db" "CREATE TABLE t2(id INTEGER PRIMARY KEY, b BLOB); $small
	SELECT (SELECT integrity_check FROM pragma_integrity_check) || '|' || count(*) FROM t2;")"
out=$(q "$MNT/w.db" "PRAGMA journal_mode=WAL; CREATE TABLE t2(id INTEGER PRIMARY KEY, b BLOB); $small
	PRAGMA wal_checkpoint(TRUNCATE);")
check_eq "WAL mode: journal_mode=WAL, 100 transactions, checkpoint" "wal 0|0|0" "$(echo $out)"
check_eq "WAL mode: integrity and rows (a second process, shared-memory index)" "ok|10000" \
	"$(q "$MNT/w.db" "SELECT (SELECT integrity_check FROM pragma_integrity_check) || '|' || count(*) FROM t2;")"
check_eq "real database: update, delete, vacuum" "ok|500|500" \
	"$(q "$MNT/real.db" "UPDATE r SET v = 'changed'||id; DELETE FROM r WHERE id % 2 = 0; VACUUM;
	SELECT (SELECT integrity_check FROM pragma_integrity_check) || '|' || count(*) || '|' || sum(v LIKE 'changed%') FROM r;")"
remount || exit 1
for db in a w real; do
	check_eq "after remount: integrity_check of $db.db" ok "$(q "$MNT/$db.db" 'PRAGMA integrity_check;')"
done
check_eq "after remount: row counts" "10000|10000|500" \
	"$(q "$MNT/a.db" 'SELECT count(*) FROM t;')|$(q "$MNT/w.db" 'SELECT count(*) FROM t2;')|$(q "$MNT/real.db" 'SELECT count(*) FROM r;')"

# Commits that returned survive a SIGKILL of the daemon.
q "$MNT/k.db" 'CREATE TABLE k(id INTEGER PRIMARY KEY);' >/dev/null
(for i in $(seq 1 100000); do
	sqlite3 "$MNT/k.db" "INSERT INTO k VALUES($i);" 2>/dev/null || break
	echo "$i" >>"$T/k.log"
done) &
writer=$!
for i in $(seq 200); do [ -s "$T/k.log" ] && break; sleep 0.1; done
sleep 1.5
kill_and_detach || exit 1
wait $writer
last=$(tail -1 "$T/k.log" 2>/dev/null)
echo "# $last commits returned before the kill"
[ -n "$last" ] || fail "no sqlite commit returned within 20s"
txfs_mount || exit 1
check_eq "after SIGKILL: integrity_check" ok "$(q "$MNT/k.db" 'PRAGMA integrity_check;')"
got=$(q "$MNT/k.db" 'SELECT count(*) FROM k;')
if [ "${got:-0}" -ge "${last:-1}" ] 2>/dev/null; then ok "after SIGKILL: all $last committed rows are there ($got)"; else
	fail "after SIGKILL: expected at least $last committed rows got $got"; fi
finish
