// node wrap.mjs STATUSFILE CMD...: under `script`, runs CMD with the terminal, ignores SIGINT itself, records CMD's own status.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

process.on('SIGINT', () => {});
const [file, cmd, ...args] = process.argv.slice(2);
const r = spawnSync(cmd, args, { stdio: 'inherit' });
writeFileSync(file, JSON.stringify({ code: r.status, signal: r.signal }));
