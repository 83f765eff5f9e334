// qmd's parent in the "parent gone" path of the GC soak (bench/soak.ts), started by
// subreaper.py: spawns argv[2..] with its own stdin, stdout and stderr (the soak's pipes, so
// they stay open when this process dies), says the child's pid on fd 3, and waits to be killed.
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';

const child = spawn(process.argv[2], process.argv.slice(3), { stdio: 'inherit' });
writeSync(3, `${JSON.stringify({ event: 'qmd', pid: child.pid })}\n`);
setInterval(() => {}, 1 << 30);
