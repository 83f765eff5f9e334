// Experiment (not part of `npm run bench`): what a client waits for before it has a server's
// tools. A client sends `initialize`, then on its reply `notifications/initialized` and
// `tools/list` (what every client we tried does first); the server is ready when `tools/list`
// is answered. For each contender: CPU (user + system, read in the server at each write by
// first-reply-preload.mjs) and wall time from spawn to the `initialize` reply and to the
// `tools/list` reply, and the gap between the two replies. Interleaved rounds; round 0 warms
// the page cache and the code caches and is not counted.
//
// Run: node bench/experiments/ready-cpu.mjs ROUNDS 'label=[VAR=value …] NODE SCRIPT [ARGS…]' …
//   e.g. QMD_INDEX=… node bench/experiments/ready-cpu.mjs 12 "sdk=node bench/contenders/sdk-server.mjs" \
//          "qmd=XDG_CACHE_HOME=/tmp/x node dist/qmd.mjs mcp"
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { interleaved, median, parseContenders } from './startup-cpu.mjs';

const PRELOAD = fileURLToPath(new URL('./first-reply-preload.mjs', import.meta.url));
const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const INITIALIZE = line({
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ready-cpu', version: '0' } },
});
const LIST = line({ method: 'notifications/initialized' }) + line({ id: 2, method: 'tools/list' });

/** One start: { init: {cpu, wall}, list: {cpu, wall}, tools }; rejects if a reply is missing within 30 s. */
export function ready(command, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, ['--import', PRELOAD, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
    const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
    let stdout = '';
    let stderr = '';
    const wall = {};
    let tools = 0;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      for (const text of stdout.split('\n').slice(0, -1)) {
        const reply = JSON.parse(text);
        if (reply.id === 1 && wall.init === undefined) {
          wall.init = performance.now() - started;
          child.stdin.write(LIST);
        }
        if (reply.id === 2 && wall.list === undefined) {
          wall.list = performance.now() - started;
          tools = reply.result?.tools?.length ?? 0;
          child.stdin.end();
        }
      }
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', () => {
      clearTimeout(bound);
      const cpu = (n) => Number(new RegExp(`REPLY ${n} ([\\d.]+)`).exec(stderr)?.[1] ?? Number.NaN);
      if (wall.list === undefined) reject(new Error(`no tools/list reply: ${stderr.slice(-500)}`));
      else resolve({ init: { cpu: cpu(1), wall: wall.init }, list: { cpu: cpu(2), wall: wall.list }, tools });
    });
    child.stdin.write(INITIALIZE);
  });
}

async function main() {
  const contenders = parseContenders(process.argv.slice(3));
  await interleaved(contenders, Number(process.argv[2]), ready);
  const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
  const base = contenders[0];
  const pick = (c, k1, k2) => median(c.samples.map((s) => s[k1][k2]));
  console.log(
    `| contender | tools | CPU to initialize (ms) | CPU to tools/list (ms) | CPU between | wall to initialize | wall to tools/list | tools/list CPU ÷ ${base.name} |`,
  );
  console.log('|:---|---:|---:|---:|---:|---:|---:|---:|');
  for (const c of contenders) {
    const gap = median(c.samples.map((s) => s.list.cpu - s.init.cpu));
    console.log(
      `| ${c.name} | ${c.samples[0]?.tools} | ${f(pick(c, 'init', 'cpu'))} | ${f(pick(c, 'list', 'cpu'))} | ${f(gap)} | ${f(pick(c, 'init', 'wall'))} | ${f(pick(c, 'list', 'wall'))} | ${(pick(c, 'list', 'cpu') / pick(base, 'list', 'cpu')).toFixed(2)} |`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
