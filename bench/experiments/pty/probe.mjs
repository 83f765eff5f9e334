// Which pseudo-terminal should the tests use (docs/design.md §5, "A person at a terminal")?
// Each run: child.mjs, under a pty of 80 columns, prints what it sees of its terminal; the
// runner writes 0x03 (Ctrl-C) to the master; in mode "exit" the child exits 130 from its
// handler, in mode "die" it is killed by SIGINT. A run is right when the child saw a
// terminal of 80 columns and the runner tells the two endings apart by the child's own status.
//   node bench/experiments/pty/probe.mjs script|python|nodepty [N]   (N of each mode, default 20)
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const N = Number(process.argv[3] ?? 20);
const which = process.argv[2];
const node = process.execPath;
const child = here('./child.mjs');
function viaProcess(cmd, args, statusFile) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let sent = false;
    p.stdout.on('data', (d) => {
      out += d;
      if (!sent && out.includes('ready')) {
        sent = true;
        p.stdin.write('\x03');
      }
    });
    p.on('close', (code, signal) => {
      let own;
      try {
        own = JSON.parse(readFileSync(statusFile, 'utf8'));
        rmSync(statusFile);
      } catch {}
      resolve({ out, outer: { code, signal }, own });
    });
  });
}
function viaNodePty(mode) {
  const pty = require('@lydell/node-pty');
  return new Promise((resolve) => {
    const p = pty.spawn(node, [child, mode], { cols: 80, rows: 24, env: process.env });
    let out = '';
    let sent = false;
    p.onData((d) => {
      out += d;
      if (!sent && out.includes('ready')) {
        sent = true;
        p.write('\x03');
      }
    });
    p.onExit(({ exitCode, signal }) => resolve({ out, own: { code: exitCode, signal } }));
  });
}
const sf = `${process.env.TMPDIR ?? '/tmp'}/pty-probe-status-${process.pid}.json`;
const run = (mode) =>
  which === 'script'
    ? viaProcess(
        'script',
        [
          '-qefc',
          `stty cols 80 rows 24; exec ${node} ${here('./wrap.mjs')} ${sf} ${node} ${child} ${mode}`,
          '/dev/null',
        ],
        sf,
      )
    : which === 'python'
      ? viaProcess('python3', [here('./ptyrun.py'), '80', '24', sf, '--', node, child, mode], sf)
      : viaNodePty(mode);
let ok = 0;
const t0 = performance.now();
const bad = [];
for (let i = 0; i < N; i++)
  for (const mode of ['exit', 'die']) {
    const r = await run(mode);
    const want = mode === 'exit' ? { code: 130, signal: null } : { code: null, signal: 'SIGINT' };
    const sig = r.own?.signal === 2 ? 'SIGINT' : r.own?.signal || null;
    const code = sig ? null : (r.own?.code ?? null);
    const good =
      r.out.includes('isTTY=true cols=80') &&
      code === want.code &&
      (sig === want.signal || (want.signal === 'SIGINT' && sig === 0 ? false : sig === want.signal));
    if (good) ok++;
    else bad.push({ mode, own: r.own, outer: r.outer, out: r.out.slice(0, 200) });
  }
console.log(
  JSON.stringify({
    which,
    runs: 2 * N,
    ok,
    msPerRun: ((performance.now() - t0) / (2 * N)).toFixed(0),
    bad: bad.slice(0, 3),
  }),
);
