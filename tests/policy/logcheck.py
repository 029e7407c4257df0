#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""logcheck - questions about a txfs audit log (.txfs/log, JSON lines).

  logcheck.py LOG veto OP PATH LINE ERRNO POLICY UID
      a record {"event":"veto","op":OP,"path":PATH,"rule":"POLICY:LINE",
      "errno":ERRNO} with pid > 0, uid UID and an exe exists. POLICY empty:
      the built-in default policy (any rule name). Exit 0 if found.
  logcheck.py LOG guard LIMIT POLICY
      a {"event":"guard","limit":LIMIT} record with a hint and rule POLICY:N
  logcheck.py LOG wellformed UID
      every line is a JSON object with time and event; every veto and every
      guard record (a refusal by a limit is a veto too: DESIGN 1.5 "every
      veto is logged with the operation, path, rule line and the process id
      and name") has op, path, rule FILE:LINE, errno, pid > 0, uid, exe
  logcheck.py LOG count EVENT
      print the number of records of EVENT
"""
import json
import re
import sys


def records(path):
    out = []
    with open(path, encoding="utf-8", errors="strict") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"line {n} is not JSON ({e}): {line[:200]!r}")
            if not isinstance(r, dict):
                raise SystemExit(f"line {n} is not a JSON object: {line[:200]!r}")
            out.append(r)
    return out


def rule_ok(rule, policy, line=None):
    if not isinstance(rule, str):
        return False
    m = re.fullmatch(r"(.+):(\d+)", rule)
    if not m:
        return False
    if policy and m.group(1) != policy:
        return False
    return line is None or m.group(2) == str(line)


def missing(r, uid):
    bad = []
    for k in ("op", "path"):
        if not isinstance(r.get(k), str) or (k == "op" and not r.get(k)):
            bad.append(k)
    if not rule_ok(r.get("rule"), None):
        bad.append("rule FILE:LINE")
    if not (isinstance(r.get("errno"), str) and r["errno"].startswith("E")):
        bad.append("errno")
    if not (isinstance(r.get("pid"), int) and r["pid"] > 0):
        bad.append("pid>0")
    if r.get("uid") != uid:
        bad.append(f"uid={uid}")
    if not (isinstance(r.get("exe"), str) and r["exe"]):
        bad.append("exe")
    return bad


def main():
    log, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    recs = records(log)
    if what == "count":
        print(sum(1 for r in recs if r.get("event") == args[0]))
        return
    if what == "veto":
        op, path, line, err, policy, uid = args
        cands = [r for r in recs if r.get("event") == "veto" and r.get("op") == op
                 and r.get("path") == path]
        for r in cands:
            if (rule_ok(r.get("rule"), policy, line) and r.get("errno") == err
                    and not missing(r, int(uid))):
                print(f"rule {r['rule'].rsplit('/', 1)[-1]}, exe {r['exe'].rsplit('/', 1)[-1]}")
                return
        if cands:
            raise SystemExit(f"veto of {op} {path!r} logged, but not as expected "
                             f"(rule {policy or '(default)'}:{line}, errno {err}, pid, "
                             f"uid {uid}, exe): {json.dumps(cands[-1])}")
        vetoes = [f"{r.get('op')} {r.get('path')}" for r in recs if r.get("event") == "veto"]
        raise SystemExit(f"no veto of {op} {path!r} in the log; vetoes there: "
                         f"{vetoes[-8:]}")
    if what == "guard":
        limit, policy = args
        for r in recs:
            if (r.get("event") == "guard" and r.get("limit") == limit
                    and isinstance(r.get("hint"), str) and r["hint"]
                    and rule_ok(r.get("rule"), policy)):
                print(f"rule {r['rule'].rsplit('/', 1)[-1]}, hint: {r['hint']}")
                return
        g = [r for r in recs if r.get("event") == "guard"]
        raise SystemExit(f"no guard event for limit {limit} with a hint and rule "
                         f"{policy or '(default)'}:N; guard events: {json.dumps(g[-3:])}")
    if what == "wellformed":
        uid = int(args[0])
        n = {}
        bad = []
        for r in recs:
            ev = r.get("event")
            n[ev] = n.get(ev, 0) + 1
            if not isinstance(r.get("time"), str) or not isinstance(ev, str):
                bad.append(("no time/event", r))
            elif ev in ("veto", "guard"):
                m = missing(r, uid)
                if m and not (ev == "veto" and r.get("op") == "control"):
                    bad.append((f"{ev} record without " + ", ".join(m), r))
        if bad:
            kinds = {}
            for k, r in bad:
                kinds.setdefault(k, r)
            raise SystemExit(f"{len(bad)} of {len(recs)} records incomplete: " + "; ".join(
                f"{k} (e.g. {json.dumps(r)})" for k, r in kinds.items()))
        print(", ".join(f"{v} {k}" for k, v in sorted(n.items(), key=str)))
        return
    raise SystemExit(f"logcheck: unknown question {what}")


main()
