#!/bin/bash
# unlink: real and new files, hard links, symlinks (not their targets),
# an open file whose name is removed, names created again afterwards.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'rm file.txt && ls file.txt; echo rc=$?'
both 'echo back > file.txt && cat file.txt && getfattr -d file.txt'
both 'echo x > n && rm n && ls n; echo rc=$?'
both 'rm hard1 && stat -c "%h %s" hard2 && cat hard2'
both 'rm link_rel && cat file.txt'
both 'rm link_dir && ls dir'
both 'rm dangling && ls -A | grep -c dangling'
both 'rm -f nothing; echo rc=$?'
both 'rm dir 2>&1; "$FSOP" unlink dir; echo rc=$?'
both 'rm dir/a.txt dir/sub/deep.txt && find dir | sort'
both '"$FSOP" unlink-open big.bin && ls big.bin; echo rc=$?'
both 'echo fresh > f2 && "$FSOP" unlink-open f2'
both 'rm exec.sh && printf "#!/bin/sh\necho new-exec\n" > exec.sh && chmod +x exec.sh && ./exec.sh'
both 'exec 3<ro.txt; rm -f ro.txt; cat <&3; exec 3<&-'
finish
