// A client parent for the orphan soak (bench/benchmarks/orphans.ts): what an MCP client app
// is to `qmd mcp`. It starts the server the way clients do — the SDK's StdioClientTransport,
// pipes for stdin, stdout and stderr — and tells the benchmark on its own stdout what it is
// doing, one JSON line per step, so the benchmark can SIGKILL it at a chosen moment. Killed,
// its ends of the pipes close: the server sees EOF (and EPIPE, and its parent gone) and
// nothing else. Closing politely is the SDK's own `client.close()`: stdin.end(), then
// SIGTERM after 2 s, then SIGKILL after 2 s more.
//
// argv[2]: JSON { qmd, index, marker, scenario: 'startup' | 'mid-request' | 'idle', polite,
//                 query, failpoints?, closeAfterMs? }
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const config = JSON.parse(process.argv[2] ?? '{}');
const say = (event, extra = {}) => process.stdout.write(`${JSON.stringify({ event, ...extra })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const env = { ...process.env, QMD_BENCH_MARKER: config.marker };
for (const key of Object.keys(env)) if (key.startsWith('QMD_') && key !== 'QMD_BENCH_MARKER') delete env[key];
if (config.failpoints) env.QMD_FAILPOINTS = config.failpoints;

const transport = new StdioClientTransport({
  command: process.execPath,
  // The index path carries the run's marker, so the server's command line names the run.
  args: [config.qmd, '--index', config.index, 'mcp'],
  env,
  stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (chunk) => {
  stderr = (stderr + chunk).slice(-4096);
});
const client = new Client({ name: 'qmd-bench-client-parent', version: '0.0.0' });

// Until the benchmark kills us (or we close), nothing else would keep this process alive.
const alive = setInterval(() => {}, 1 << 30);

async function politeClose() {
  say('closing');
  await client.close();
  say('closed');
  clearInterval(alive);
}

try {
  const connecting = client.connect(transport);
  say('spawned', { pid: transport.pid });
  await connecting;
  say('initialized');
  if (config.scenario === 'mid-request') {
    const call = client.callTool({ name: 'query', arguments: { query: config.query } }, undefined, { timeout: 60_000 });
    call.catch(() => {}); // a polite close mid-request rejects it: that is the point
    say('request-sent');
    if (config.polite) {
      await sleep(config.closeAfterMs ?? 0);
      await politeClose();
    }
  } else if (config.scenario === 'idle') {
    await client.callTool({ name: 'query', arguments: { query: config.query } });
    say('idle');
    if (config.polite) {
      await sleep(config.closeAfterMs ?? 0);
      await politeClose();
    }
  }
} catch (error) {
  say('error', { message: String(error?.message ?? error), stderr });
  clearInterval(alive);
  process.exitCode = 1;
}
