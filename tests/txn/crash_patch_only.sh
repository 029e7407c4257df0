#!/bin/bash
# crash_patch.sh with a change set of in-place patches and metadata only
# (no file created, copied, moved or removed): such a commit ends with an
# fsync of each file it touched (CS_FSYNC) instead of a syncfs; crashing
# at every one of its fault points must end exactly before or after.
exec bash "$(dirname "$0")/crash_patch.sh" --only-patches
