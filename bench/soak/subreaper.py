# The "parent gone" path of the GC soak (bench/soak.ts): qmd's parent must die while qmd's
# stdin stays open, and the soak must still learn how qmd ended. This process makes itself a
# child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), starts the middle process (argv[1:],
# qmd's parent, which the soak SIGKILLs), so the orphaned qmd is re-parented here and its exit
# status is reaped here. Every start and every reaped child is one JSON line on fd 3.
import ctypes
import json
import os
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("subreaper: prctl failed")
report = os.fdopen(3, "w", buffering=1)
middle = subprocess.Popen(sys.argv[1:], pass_fds=(3,))
report.write(json.dumps({"event": "middle", "pid": middle.pid}) + "\n")
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    report.write(json.dumps({
        "event": "reaped",
        "pid": pid,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    }) + "\n")
