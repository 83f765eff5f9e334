// Experiment (not part of `npm run bench`): what a cold start costs each contender up to its
// `initialize` reply, in CPU time as well as wall time. On a shared machine wall times swing
// with the load; the process's own CPU time (user + system, read at the reply by
// first-reply-preload.mjs) moves far less, so small steps (a few ms) show. Interleaved rounds.
//
// Run: node bench/experiments/startup-cpu.mjs ROUNDS 'label=[VAR=value …] NODE SCRIPT [ARGS…]' …
//   e.g. QMD_INDEX=… node bench/experiments/startup-cpu.mjs 20 "sdk=node bench/contenders/sdk-server.mjs" "qmd=node dist/qmd.mjs mcp"
// A contender whose server is another process (a launcher) gets wall time only.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./first-reply-preload.mjs', import.meta.url));
const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-cpu', version: '0' } },
})}\n`;

export function once(command, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, ['--import', PRELOAD, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let stderr = '';
    let wall;
    child.stdout.once('data', () => {
      wall = performance.now() - started;
      child.stdin.end();
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', () => {
      const seen = /FIRST_REPLY ([\d.]+) ([\d.]+)/.exec(stderr);
      if (wall === undefined) reject(new Error(`no reply: ${stderr.slice(-500)}`));
      else resolve({ cpu: seen ? Number(seen[1]) : Number.NaN, inProcess: seen ? Number(seen[2]) : Number.NaN, wall });
    });
    child.stdin.write(INITIALIZE);
  });
}

export const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
};

/** `label=[VAR=value …] NODE SCRIPT [ARGS…]` specs as contenders, each with its own variables. */
export function parseContenders(specs) {
  return specs.map((spec) => {
    const name = spec.slice(0, spec.indexOf('='));
    // Words before the command that hold a `=` are that contender's variables: `VAR=value node …`.
    const words = spec.slice(spec.indexOf('=') + 1).split(' ');
    const env = { ...process.env };
    while (words[0]?.includes('=')) {
      const word = words.shift();
      env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
    }
    const [command, ...args] = words;
    return { name, command, args, env, samples: [] };
  });
}

/** `rounds` interleaved rounds of `measure` over the contenders, the order rotating; round 0 (page cache, code caches) is not kept. */
export async function interleaved(contenders, rounds, measure) {
  for (let round = 0; round <= rounds; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const c = contenders[(round + i) % contenders.length];
      const sample = await measure(c.command, c.args, c.env);
      if (round > 0) c.samples.push(sample);
    }
  }
}

async function main() {
  const contenders = parseContenders(process.argv.slice(3));
  await interleaved(contenders, Number(process.argv[2]), once);
  const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
  console.log('| contender | CPU p50 (ms) | in-process p50 (ms) | wall p50 (ms) |');
  console.log('|:---|---:|---:|---:|');
  for (const c of contenders) {
    const pick = (k) => median(c.samples.map((s) => s[k]));
    console.log(`| ${c.name} | ${f(pick('cpu'))} | ${f(pick('inProcess'))} | ${f(pick('wall'))} |`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
