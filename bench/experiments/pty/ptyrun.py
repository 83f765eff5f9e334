# python3 ptyrun.py COLS ROWS STATUSFILE -- CMD...: runs CMD under a new pty of that size; relays stdin->master, master->stdout; writes the child's wait status as JSON to STATUSFILE.
import os, pty, sys, fcntl, termios, struct, select, json
cols, rows, status_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cmd = sys.argv[5:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    os.execvp(cmd[0], cmd)
stdin_open = True
while True:
    fds = [fd] + ([0] if stdin_open else [])
    r, _, _ = select.select(fds, [], [])
    if 0 in r:
        data = os.read(0, 4096)
        if not data: stdin_open = False
        else: os.write(fd, data)
    if fd in r:
        try: data = os.read(fd, 4096)
        except OSError: data = b''
        if not data: break
        os.write(1, data)
_, st = os.waitpid(pid, 0)
with open(status_file, 'w') as f:
    json.dump({'code': os.WEXITSTATUS(st) if os.WIFEXITED(st) else None, 'signal': os.WTERMSIG(st) if os.WIFSIGNALED(st) else None}, f)
