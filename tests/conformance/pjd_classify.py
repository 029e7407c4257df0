#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pjd_classify.py LOGDIR REFDIR EXPECTED_FILE... - judge one pjdfstest run.

LOGDIR holds what ci.sh's wrapper kept of each test file run on txfs:
NAME.tap (its TAP output), NAME.rc (its exit status), NAME.t (its path
below tests/, e.g. chown/00.t). REFDIR holds the same for the expected
files run on the reference: a plain ext4 folder, as root of a user
namespace that maps uids and gids 0-65535 onto themselves, where the
kernel refuses block and character devices with EPERM (mknod needs
CAP_MKNOD in the initial namespace) exactly where txfs refuses them.
EXPECTED_FILE names the files that create such devices.

A file passes when it printed its plan, ran every planned test, failed
none (a "not ok ... # TODO" is the suite's own mark of a known Linux
difference, not a failure) and exited 0. An expected file must fail,
ran all its tests and exit 0, and its failed tests must be the
reference's, line for line (test number, command, expected and actual
answer; names and numbers of 6 digits or more, which are random or
inode numbers, compared as placeholders), and the reference's must
include a block or character device refused with EPERM. The one
allowance, for mknod/08.t: the reference kernel lets a caller without
CAP_MKNOD make a whiteout (`mknod NAME c MODE 0 0`, overlayfs's
whiteout), txfs refuses it as any character device; so the lines of
`mknod NAME c ... 0 0` and the `mknod NAME f` that follows it (EEXIST
where the whiteout was made) are left out of that comparison.

Prints one line per file that is not a plain pass ("FAIL name: why",
"EXPECTED name: ...", "PASSED-EXPECTED name: ...") and the summary
line "files F passed P expected E unexpected U subtests S" last. Exit
status 0 when nothing is unexpected.
"""
import os
import re
import sys

TAPLINE = re.compile(r"^(not )?ok \d+")
DEVICE = re.compile(r"^not ok \d+ - tried '(-[ugU] \S+ )*(-- )?mknod \S+ [bc] "
                    r".*got EPERM$")
WHITEOUT = re.compile(r"- tried 'mknod \S+ (c \S+ 0 0|f )")


def normal(line):
    line = re.sub(r"pjdfstest_[0-9a-f]{32}", "pjdfstest_N", line)
    line = re.sub(r"[0-9a-f/]{20,}", "N", line)    # namegen_max's names
    return re.sub(r"[0-9]{6,}", "#", line)


def read(stem):
    try:
        with open(stem + ".tap", errors="replace") as f:
            tap = f.read()
        with open(stem + ".rc") as f:
            rc = int(f.read().strip() or "255")
    except (OSError, ValueError):
        return "", 255
    return tap, rc


def judge(tap, rc):
    """(plan, ran, failed lines, problems with the run itself)"""
    plan = None
    ran = 0
    failed, bad = [], []
    for line in tap.splitlines():
        if plan is None and re.match(r"^1\.\.\d+", line):
            plan = int(line[3:].split()[0])
        elif TAPLINE.match(line):
            ran += 1
            if line.startswith("not ok") and "# TODO" not in line:
                failed.append(line)
    if rc != 0:
        bad.append("exit status %d" % rc)
    if plan is None:
        bad.append("no plan")
    elif ran != plan:
        bad.append("planned %d tests, ran %d" % (plan, ran))
    return plan, ran, failed, bad


def compare(name, failed, ref):
    """None if txfs failed as the reference did, else why not."""
    mine = [normal(x) for x in failed]
    theirs = [normal(x) for x in ref]
    if name == "mknod/08.t":
        mine = [x for x in mine if not WHITEOUT.search(x)]
        theirs = [x for x in theirs if not WHITEOUT.search(x)]
    if mine == theirs:
        return None
    for a, b in zip(mine + [""] * len(theirs), theirs + [""] * len(mine)):
        if a != b:
            return "txfs: '%s', reference: '%s'" % (a[:200], b[:200])
    return "differs"


def main():
    logdir, refdir, expected = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    files = passed = exp = unexpected = subtests = 0
    seen = set()
    for base in sorted(os.listdir(logdir)):
        if not base.endswith(".t"):
            continue
        stem = base[:-2]
        with open(os.path.join(logdir, base)) as f:
            name = f.read().strip()
        seen.add(name)
        files += 1
        plan, ran, failed, bad = judge(*read(os.path.join(logdir, stem)))
        subtests += ran
        if name not in expected:
            if failed or bad:
                unexpected += 1
                print("FAIL %s: %s" % (name, (bad + failed)[0][:300]))
            else:
                passed += 1
            continue
        if not failed and not bad:
            unexpected += 1
            print("PASSED-EXPECTED %s: passes now; take it off the list"
                  % name)
            continue
        rplan, rran, rfailed, rbad = judge(*read(os.path.join(refdir, stem)))
        why = None
        if bad:
            why = bad[0]
        elif rbad:
            why = "the reference run: " + rbad[0]
        elif not any(DEVICE.match(x) for x in rfailed):
            why = "the reference refused no block or character device"
        else:
            why = compare(name, failed, rfailed)
        if why:
            unexpected += 1
            print("FAIL %s (expected: device nodes) failed otherwise: %s"
                  % (name, why))
        else:
            exp += 1
            print("EXPECTED %s: %d of %d failed, as on ext4 refusing device"
                  " nodes (%d mknod b|c: EPERM)" %
                  (name, len(failed), ran,
                   sum(1 for x in failed if DEVICE.match(x))))
    for name in sorted(expected - seen):
        unexpected += 1
        print("FAIL %s: expected to fail, not run" % name)
    print("files %d passed %d expected %d unexpected %d subtests %d" %
          (files, passed, exp, unexpected, subtests))
    return 1 if unexpected or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
