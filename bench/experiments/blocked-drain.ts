/**
 * A client alive that never reads (issue 34 item 6): `qmd mcp` is sent `--queries` query calls
 * whose replies fill the stdout pipe, then its stdin is ended while the client still reads
 * nothing. How long until the server exits (the drain bound is QMD_DRAIN_TIMEOUT_MS, 5 s by
 * default; the steps 2 s each; the watchdog 1 s), and what it said.
 *
 *   npm run build && npx tsx bench/experiments/blocked-drain.ts [--queries 400] [--read-after-ms 20000] [--bin dist/qmd.mjs]
 */
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../../test/support/qmd.js';
import { spawnProcess } from '../../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const QUERIES = Number(arg('--queries') ?? 400);
const READ_AFTER_MS = Number(arg('--read-after-ms') ?? 20_000);
const BIN = arg('--bin') ?? QMD_BIN;
const SHARED = process.argv.includes('--shared');

const NOTES = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [
    `bread-${i}.md`,
    `# Bread ${i}\n\n${'Sourdough needs a starter, flour, water and salt; bake it hot. '.repeat(12)}\n`,
  ]),
);

const ws = tempWorkspace(NOTES);
try {
  const env = qmdEnv(ws.index);
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  if (added.code !== 0) throw new Error(added.stderr);
  const p = spawnProcess(process.execPath, [BIN, 'mcp', ...(SHARED ? ['--shared'] : [])], {
    env: SHARED ? { ...env, XDG_RUNTIME_DIR: ws.dir, QMD_SHARED_IDLE_MS: '1000' } : env,
    keepStdout: false,
  });
  p.child.stdout?.pause();
  const lines: object[] = [
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
  ];
  for (let id = 1; id <= QUERIES; id++)
    lines.push({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'query', arguments: { query: 'sourdough starter', limit: 40 } },
    });
  p.child.stdin?.write(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  // Time for the replies to be written as far as they go (the pipe fills; the rest waits in the process).
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const ended = performance.now();
  p.child.stdin?.end();
  const reader = setTimeout(() => {
    console.log(`client reads now, ${READ_AFTER_MS} ms after the EOF`);
    p.child.stdout?.resume();
  }, READ_AFTER_MS);
  await p.exited;
  clearTimeout(reader);
  console.log(`exit ${Math.round(performance.now() - ended)} ms after the EOF`);
  console.log(
    p
      .stderr()
      .split('\n')
      .filter((l) => !l.includes('failpoint'))
      .slice(-12)
      .join('\n'),
  );
} finally {
  ws.cleanup();
}
