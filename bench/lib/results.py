# SPDX-License-Identifier: Apache-2.0
"""Samples per (row, peer, round) and the markdown tables made from them.

A cell of a round is a float (seconds, IOPS, bytes) or a Mark: a failure
("fails: EMFILE") or a reason the peer has no number ("n/a (...)", "-").
Rows with ratio=True print native's median absolute value and, for every
other peer, the median and min-max of peer/native computed round by round
(for IOPS rows native/peer, so that a larger number is always slower).
"""
import statistics


class Mark:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def fail(msg):
    return Mark("fails: " + msg)


def na(msg):
    return Mark(f"n/a ({msg})")


DASH = Mark("-")


class Row:
    def __init__(self, key, label, kind, ratio):
        self.key, self.label, self.kind, self.ratio = key, label, kind, ratio


class Results:
    def __init__(self, peers):
        self.peers = peers            # Peer objects, in column order
        self.rows = {}                # key -> Row, in insertion order
        self.cells = {}               # (key, peer name) -> {round: value}
        self.tables = []              # (title, caption, [row keys], notes)
        self.rounds = {}              # row key -> rounds planned

    def table(self, title, caption, rows, rounds, notes=None):
        """Declare a table: rows is a list of (key, label, kind, ratio)."""
        t = next((t for t in self.tables if t[0] == title), None)
        if t is None:
            t = [title, caption, [], []]
            self.tables.append(t)
        keys = t[2]
        t[3].extend(notes or [])
        for key, label, kind, ratio in rows:
            self.rows[key] = Row(key, label, kind, ratio)
            self.rounds[key] = rounds
            if key not in keys:
                keys.append(key)
        return t

    def add(self, key, peer, rnd, value):
        self.cells.setdefault((key, peer.name), {})[rnd] = value

    def has(self, key, peer, rnd):
        return rnd in self.cells.get((key, peer.name), {})

    def fill(self, keys, peer, rnd, mark):
        """Give every row in keys that has no value for rnd the mark."""
        for k in keys:
            if not self.has(k, peer, rnd):
                self.add(k, peer, rnd, mark)

    # ------------------------------------------------------------ output
    def cell(self, key, peer, native):
        row = self.rows[key]
        vals = self.cells.get((key, peer.name), {})
        if not vals:
            return "not run"
        nums = {r: v for r, v in vals.items() if isinstance(v, float)}
        marks = [v for v in vals.values() if isinstance(v, Mark)]
        if not nums:
            return _first_mark(marks)
        suffix = f" [{len(marks)} of {len(vals)} rounds: " \
                 f"{_first_mark(marks)}]" if marks else ""
        nat = self.cells.get((key, native.name), {}) if native else {}
        if row.ratio and native and peer is not native and any(
                isinstance(v, float) for v in nat.values()):
            ratios = []
            for r, v in nums.items():
                n = nat.get(r)
                if isinstance(n, float) and n > 0 and v > 0:
                    ratios.append(n / v if row.kind == "iops" else v / n)
            if ratios:
                return _ratio(ratios, row.kind) + suffix
        return _abs(list(nums.values()), row.kind) + suffix

    def markdown(self):
        native = next((p for p in self.peers if p.name == "native"), None)
        out = []
        for title, caption, keys, notes in self.tables:
            if not any((k, p.name) in self.cells for k in keys
                       for p in self.peers):
                continue
            out.append(f"### {title}\n")
            rounds = sorted({self.rounds[k] for k in keys})
            cap = caption.replace("{rounds}", "/".join(str(r) for r in rounds))
            if rounds == [1]:
                cap = cap.replace("1 rounds", "1 round")
            out.append(cap + "\n")
            peers = [p for p in self.peers if any(
                (k, p.name) in self.cells for k in keys)]
            out.append("| | " + " | ".join(p.label for p in peers) + " |")
            out.append("| --- " * (len(peers) + 1) + "|")
            for k in keys:
                cells = [self.cell(k, p, native) for p in peers]
                out.append(f"| {_esc(self.rows[k].label)} | " +
                           " | ".join(_esc(c) for c in cells) + " |")
            for n in notes:
                out.append(f"\n{n}")
            out.append("")
        return "\n".join(out)


def _esc(s):
    return s.replace("|", "\\|")


def _first_mark(marks):
    texts = [m.text for m in marks]
    return max(set(texts), key=texts.count) if texts else "?"


def _ratio(vals, kind):
    med = statistics.median(vals)
    lo, hi = min(vals), max(vals)
    word = "x slower" if kind == "iops" else "x"
    if len(vals) == 1:
        return f"{med:.2f}{word}"
    return f"{med:.2f}{word} ({lo:.2f}-{hi:.2f})"


def fmt(v, kind):
    if kind in ("time", "ms"):
        if v < 0.001:
            return f"{v * 1e3:.3f} ms"
        if v < 1:
            return f"{v * 1e3:.3g} ms"
        return f"{v:.3g} s"
    if kind == "iops":
        return f"{v / 1000:.3g}k IOPS"
    if kind == "bytes":
        for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if v >= div:
                return f"{v / div:.3g} {unit}"
        return f"{v:.0f} B"
    return f"{v:.3g}"


def _abs(vals, kind):
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt(med, kind)
    lo, hi = min(vals), max(vals)
    hi_s, lo_s = fmt(hi, kind).split(" ", 1), fmt(lo, kind).split(" ", 1)
    if len(hi_s) == 2 and len(lo_s) == 2 and hi_s[1] == lo_s[1]:
        return (f"{fmt(med, kind)} ({fmt(lo, kind).split(' ')[0]}-"
                f"{fmt(hi, kind)})")
    return f"{fmt(med, kind)} ({fmt(lo, kind)} - {fmt(hi, kind)})"
