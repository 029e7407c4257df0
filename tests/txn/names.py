# SPDX-License-Identifier: Apache-2.0
# names.py - the hostile names of tests/txn/cli_names.sh and the checks of
# what txfs prints about them. Every path is bytes.
#
#   names.py real WS            make the real files (before the mount)
#   names.py change MNT OUT     change them in the mount; OUT: the expected
#                               change set (JSON, hex)
#   names.py more MNT OUT       more changes (after a savepoint)
#   names.py changes FILE EXP   FILE (.txfs/changes or the --since text)
#                               lists exactly the changes of EXP
#   names.py namestatus FILE EXP   the same for txfs diff --name-status
#   names.py status JSON WS MNT STATE   status.json: strict JSON, the
#                               paths read back exactly (K_hex or K)
#   names.py statustext FILE WS MNT STATE   the text form, C-quoted paths
#   names.py same A B           trees A and B: same names, types, contents
#   names.py run JSON           txfs run --json: strict JSON, changes exact
import json
import os
import sys

C0 = [bytes([b]) for b in range(1, 32)]
LONG = b"L" * 255
LONG_NL = b"n\n" + b"m" * 253
PLAIN = [b"plain.txt", b"with space", "caf\u00e9".encode(), b"a->b", b"x,y"]
ODD = [b"new\nline", b'q"uote', b"back\\slash", b'"lead', b"bad\xff",
       b"trunc\xc3(", b"overlong\xc0\xaf", b"surr\xed\xa0\x80",
       b"c1\xc2\x85", b"del\x7f", b"a -> b", b"a, b", b"tab\t(needs review)",
       b"real\xef\xbf\xbd", LONG, LONG_NL, b"status.json", b"changes",
       b".txfs", b"\\n", b"\\377"]


def c0(b):
    return b"c0" + b + b"x"


def real(ws):
    for n in PLAIN + ODD + [c0(b) for b in C0]:
        with open(os.path.join(ws, n), "wb") as f:
            f.write(b"old " + n + b"\n")
    os.mkdir(os.path.join(ws, b"sub"))
    os.mkdir(os.path.join(ws, b"sub", b".txfs"))      # like the ctl folder
    with open(os.path.join(ws, b"sub", b".txfs", b"status.json"), "wb") as f:
        f.write(b"{}\n")
    os.mkdir(os.path.join(ws, b"dir\nnl"))


def save(out, changes):
    with open(out, "w") as f:
        json.dump(sorted([k, a.hex(), b.hex() if b else None]
                         for k, a, b in changes), f)


def load(path):
    with open(path) as f:
        return sorted((k, bytes.fromhex(a), bytes.fromhex(b) if b else None)
                      for k, a, b in json.load(f))


def write(p, data):
    with open(p, "wb") as f:
        f.write(data)


def change(mnt, out):
    j = lambda n: os.path.join(mnt, n)
    ch = []
    for n in PLAIN[:2] + ODD[:4] + [b"c1\xc2\x85", b"real\xef\xbf\xbd",
                                    LONG, LONG_NL, b"status.json"]:
        write(j(n), b"new content of " + n + b"\n")
        ch.append(("M", n, None))
    for b in C0:                    # every C0 byte: modified, one line each
        write(j(c0(b)), b"changed\n")
        ch.append(("M", c0(b), None))
    os.rename(j(b"bad\xff"), j(b"moved\xfe\n"))
    os.rename(j(b"a -> b"), j(b"c -> d"))
    os.rename(j(b"del\x7f"), j(b"plain2"))
    ch += [("R", b"bad\xff", b"moved\xfe\n"), ("R", b"a -> b", b"c -> d"),
           ("R", b"del\x7f", b"plain2")]
    for n in [b"a, b", b"trunc\xc3(", b"\\377", b"tab\t(needs review)",
              b"changes"]:
        os.unlink(j(n))
        ch.append(("D", n, None))
    for n in [b"fresh\n", b'"', b"\\", b"x\xfe\xfdy", b"\x01", b"c1\xc2\x9b",
              b"sub/.txfs/changes", b"dir\nnl/in\nside", b"N" * 255]:
        write(j(n), b"fresh " + n + b"\n")
        ch.append(("A", n, None))
    write(j(b"sub/.txfs/status.json"), b"[]\n")
    ch.append(("M", b"sub/.txfs/status.json", None))
    save(out, ch)


def more(mnt, out):
    j = lambda n: os.path.join(mnt, n)
    write(j(b"after\nsp"), b"1\n")
    os.unlink(j(b"overlong\xc0\xaf"))
    os.rename(j(b"surr\xed\xa0\x80"), j(b"surr2 -> \n"))
    save(out, [("A", b"after\nsp", None), ("D", b"overlong\xc0\xaf", None),
               ("R", b"surr\xed\xa0\x80", b"surr2 -> \n")])


ESC = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13,
       b'"': 34, b"\\": 92}


def unquote(s):
    """A C-quoted name at the start of s (bytes): (name, rest)."""
    assert s[:1] == b'"', s
    out, i = bytearray(), 1
    while s[i:i + 1] != b'"':
        c = s[i:i + 1]
        assert c, f"no closing quote: {s!r}"
        if c != b"\\":
            out += c
            i += 1
            continue
        e = s[i + 1:i + 2]
        if e in ESC:
            out.append(ESC[e])
            i += 2
        else:
            o = s[i + 1:i + 4]
            assert len(o) == 3 and all(48 <= d <= 55 for d in o), s
            out.append(int(o, 8))
            i += 4
    return bytes(out), s[i + 1:]


def name(s, stop):
    if s[:1] == b'"':
        return unquote(s)
    end = min([x for x in (s.find(stop) if stop else -1, s.find(b"\t"))
               if x >= 0] or [len(s)])
    n = s[:end]
    # a plain name holds nothing that would need quoting
    assert n and not any(c < 0x20 or c in (0x7f, 0x22, 0x5c) for c in n), n
    n.decode("utf-8")
    return n, s[end:]


def text_lines(path):
    data = open(path, "rb").read()
    data.decode("utf-8")            # valid UTF-8, whatever the names
    assert data.endswith(b"\n") or not data, data[-50:]
    lines = data.split(b"\n")[:-1]
    for ln in lines:
        assert not any(c < 0x20 and c != 9 for c in ln), ln
    return lines


def changes(path, exp, name_status=False):
    got = []
    for ln in text_lines(path):
        k, rest = chr(ln[0]), ln[2:]
        assert ln[1:2] == (b"\t" if name_status else b" "), ln
        a, rest = name(rest, None if name_status else b" -> ")
        b = None
        if k == "R":
            sep = b"\t" if name_status else b" -> "
            assert rest.startswith(sep), ln
            b, rest = name(rest[len(sep):], None)
        assert rest in (b"", b"\t(needs review)"), ln
        got.append((k, a, b))
    got.sort()
    want = load(exp)
    if got != want:
        print("missing:", [x for x in want if x not in got])
        print("extra:", [x for x in got if x not in want])
        sys.exit(1)
    # plain names are printed as they are, as before
    sep = b"\t" if name_status else b" "
    lines = text_lines(path)
    for n in [b"plain.txt", b"with space"]:
        if ("M", n, None) in want:
            assert b"M" + sep + n in lines, (n, lines[:5])
    print(f"{len(got)} changes, every one exact")


def exact(d, k):
    h = d.get(k + "_hex")
    return bytes.fromhex(h) if h is not None else d[k].encode("utf-8")


def strict(path):
    data = open(path, "rb").read()
    d = json.loads(data.decode("utf-8"),
                   object_pairs_hook=lambda kv: dict(no_dup(kv)))
    assert data.count(b"\n") == 1 and data.endswith(b"\n"), "one line"
    return d


def no_dup(kv):
    keys = [k for k, _ in kv]
    assert len(keys) == len(set(keys)), keys
    return kv


def status(path, ws, mnt, state):
    d = strict(path)
    for k, want in (("workspace", ws), ("mountpoint", mnt), ("state", state)):
        got = exact(d, k)
        assert got == os.fsencode(want), (k, got, want)
    print("status.json: strict JSON, workspace, mountpoint, state exact")


def statustext(path, ws, mnt, state):
    want = {b"workspace": ws, b"mounted at": mnt, b"state": state}
    seen = 0
    for ln in text_lines(path):
        k, _, v = ln.partition(b": ")
        if k in want:
            got = unquote(v)[0] if v[:1] == b'"' else v
            assert got == os.fsencode(want[k]), (k, got)
            seen += 1
    assert seen == 3, seen
    print("status text: paths one line each, exact")


def tree(top):
    out = {}
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        for n in dirs:
            out[os.path.join(rel, n)] = "dir"
        for n in files:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.join(rel, n)] = f.read()
        dirs[:] = [n for n in dirs if n != b".txfs" or rel != b"."]
    out.pop(os.path.join(b".", b".txfs"), None)
    return out


def same(a, b):
    ta, tb = tree(os.fsencode(a)), tree(os.fsencode(b))
    if ta != tb:
        print("only in A:", sorted(set(ta) - set(tb))[:5])
        print("only in B:", sorted(set(tb) - set(ta))[:5])
        print("differ:", [k for k in ta if k in tb and ta[k] != tb[k]][:5])
        sys.exit(1)
    print(f"same trees ({len(ta)} entries)")


def run(path):
    d = strict(path)
    assert d["action"] == "committed", d
    assert isinstance(d["transaction"], dict), d
    ch = exact(d, "changes")
    tmp = path + ".changes"
    open(tmp, "wb").write(ch)
    changes(tmp, path + ".exp")


if __name__ == "__main__":
    cmd, args = sys.argv[1], [os.fsencode(a) if i == 0 and sys.argv[1] in
                              ("real", "change", "more") else a
                              for i, a in enumerate(sys.argv[2:])]
    {"real": real, "change": change, "more": more, "changes": changes,
     "namestatus": lambda f, e: changes(f, e, True), "status": status,
     "statustext": statustext, "same": same, "run": run}[cmd](*args)
