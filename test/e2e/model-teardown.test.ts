/**
 * The crash this project exists to avoid (docs/design.md §1.3), for each kind of native call a
 * `query` makes: a generation (the query expansion), an embedding, a document ranking. Each run
 * starts `qmd mcp` with the three tiny generated models, sends one `query`, and the moment the
 * server says that kind of call is entering llama.cpp (`QMD_DEBUG_EMBED`), its client leaves:
 * stdin closed (EOF), SIGTERM, or its parent killed (SIGKILL, while a sibling keeps its pipes
 * open, so only the parent watch can tell). Every run must exit 0 with no native crash. Whether
 * the call was still running when the store closed is read from the server's `closing:` line;
 * across the runs it must have been at least once, or the case under test did not happen.
 *
 * A drain bound of 1 ms: one trigger drains in-flight calls, so the store is disposed under a
 * running native call only when the drain is cut short; the deadline does that at once.
 * One llama.cpp thread: with two, on oversubscribed cores, one call can outlast a step bound.
 * `QMD_TEARDOWN_RUNS` lowers the count of runs for a quick local try (CI: 30).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIdentity } from '../../src/serve/daemon/proc.js';
import { within } from '../support/bounded.js';
import { tinyModelPath } from '../support/gguf.js';
import { tinyGeneratorPath, tinyRerankerPath } from '../support/gguf-models.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const RUNS = Number(process.env.QMD_TEARDOWN_RUNS ?? 30);
const PARENT = fileURLToPath(new URL('./fixtures/query-parent.mjs', import.meta.url));
const NATIVE = /Segmentation fault|Aborted|GGML_ASSERT|terminate called|double free|corrupted|Illegal instruction/;

// Twenty notes that share words, so a ranking has candidates to read one by one.
const NOTES = Object.fromEntries(
  Array.from({ length: 20 }, (_, i) => [
    `note-${i}.md`,
    `# Note ${i}\n\nSourdough bread ${i}: a starter, flour, water and salt; the oven and the crust.\n`,
  ]),
);
const ws = tempWorkspace(NOTES);
// About 1,700 characters: under the tool's 2,000 per query, more tokens than the tiny model's context.
const LONG = Array.from({ length: 130 }, (_, i) => `sourdough ${i}`).join(' ');

interface Kind {
  /** The line the server prints just before the call enters llama.cpp. */
  entering: string;
  closing: RegExp;
  models: Record<string, string>;
  /** The `query` tool's arguments. */
  args: Record<string, unknown>;
}

const KINDS: Record<'expansion' | 'embedding' | 'ranking', Kind> = {
  expansion: {
    entering: 'QMD debug: generation call entering llama.cpp',
    closing: /closing: 1 generation call\(s\) running natively/,
    models: { QMD_EXPAND_MODEL: tinyGeneratorPath() },
    args: { query: 'sourdough bread' },
  },
  embedding: {
    entering: 'QMD debug: embedding call entering llama.cpp',
    closing: /closing: 1 embedding call\(s\) running natively/,
    models: {},
    // Ten calls back to back, each as long as the context takes: the parent watch looks every
    // 100 ms, so one call alone (~15 ms here when the cores are free) can end before it sees.
    args: { searches: Array.from({ length: 10 }, (_, i) => ({ type: 'vec', query: `${LONG} ${i}` })) },
  },
  ranking: {
    entering: 'QMD debug: ranking call entering llama.cpp',
    closing: /closing: 1 ranking call\(s\) running natively/,
    models: { QMD_RERANK_MODEL: tinyRerankerPath() },
    args: {
      searches: [
        { type: 'lex', query: 'sourdough' },
        { type: 'vec', query: 'bread with a crust' },
      ],
    },
  },
};

let base: NodeJS.ProcessEnv;
beforeAll(async () => {
  base = qmdEnv(ws.index, { QMD_EMBED_MODEL: tinyModelPath(), QMD_EMBED_THREADS: '1' });
  for (const args of [['collection', 'add', ws.notesDir, '--name', 'notes'], ['embed']]) {
    const run = await runQmd(args, base);
    expect(run.code, run.stderr).toBe(0);
  }
});
afterAll(() => ws.cleanup());

const line = (message: Record<string, unknown>): string => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const hello = line({
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'teardown', version: '1' } },
});

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  running: boolean;
  stderr: string;
}

const env = (kind: Kind) => ({ ...base, ...kind.models, QMD_DEBUG_EMBED: '1', QMD_DRAIN_TIMEOUT_MS: '1' });

/** EOF or SIGTERM: qmd is the test's child, its exit status is read. */
async function direct(kind: Kind, trigger: 'EOF' | 'SIGTERM'): Promise<Outcome> {
  const server = spawnMcp(env(kind));
  try {
    server.child.stdin?.write(hello);
    await server.waitFor(() => (server.stdout().includes('"id":1') ? true : undefined), 'the initialize reply');
    server.child.stdin?.write(line({ method: 'notifications/initialized' }));
    server.child.stdin?.write(line({ id: 2, method: 'tools/call', params: { name: 'query', arguments: kind.args } }));
    await server.waitForStderr(kind.entering, 60_000);
    if (trigger === 'EOF') server.child.stdin?.end();
    else server.child.kill('SIGTERM');
    const exit = await waitForExit(server, 60_000);
    return { ...exit, running: kind.closing.test(server.stderr()), stderr: server.stderr() };
  } finally {
    server.kill();
  }
}

/** SIGKILL a pid from the tree, only while it is still the process we started. */
function killIfOurs(pid: number | undefined, program: string): void {
  if (!pid) return;
  const identity = readIdentity(pid);
  if (identity?.cmdline.some((arg) => arg.includes(program))) process.kill(pid, 'SIGKILL');
}

/**
 * Parent death: qmd is the fixture's child, so its exit status cannot be read; what it says
 * is (`Shutdown complete …: exit N`), and its stderr ending says it is gone (it held the
 * last write end of that pipe).
 */
async function parentDies(kind: Kind): Promise<Outcome> {
  const parent = spawnProcess(process.execPath, [PARENT, QMD_BIN, JSON.stringify(kind.args)], { env: env(kind) });
  const stderrClosed = new Promise<void>((resolve) => parent.child.stderr?.once('end', resolve));
  let pids: { qmd: number; holder: number } | undefined;
  try {
    pids = await parent.waitFor(() => {
      const first = parent.stdout().split('\n')[0];
      return first ? (JSON.parse(first) as { qmd: number; holder: number }) : undefined;
    }, 'the pids of the tree');
    await parent.waitForStderr(kind.entering, 60_000);
    parent.child.kill('SIGKILL');
    await within(stderrClosed, () => `qmd to exit after its parent; stderr:\n${parent.stderr()}`, 60_000);
    const stderr = parent.stderr();
    const code = /Shutdown complete in [\d.]+ ms: .*, exit (\d+)$/m.exec(stderr)?.[1];
    return { code: code === undefined ? null : Number(code), signal: null, running: kind.closing.test(stderr), stderr };
  } finally {
    killIfOurs(pids?.holder, 'sleep');
    killIfOurs(pids?.qmd, QMD_BIN);
    parent.kill();
  }
}

async function repeat(run: () => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let started = 0;
  // Two at a time: each run pays ~1-2 s to start llama.cpp on these 2 cores.
  const worker = async () => {
    while (started < RUNS) {
      started++;
      outcomes.push(await run());
    }
  };
  await Promise.all([worker(), worker()]);
  return outcomes;
}

const TRIGGERS = [
  ['stdin EOF', (kind: Kind) => direct(kind, 'EOF'), 'Shutting down (stdin closed)...'],
  ['SIGTERM', (kind: Kind) => direct(kind, 'SIGTERM'), 'Shutting down (SIGTERM)...'],
  ['parent death', parentDies, 'Shutting down (parent exited)...'],
] as const;

for (const [name, kind] of Object.entries(KINDS)) {
  describe(`a client leaves while a ${name} runs natively, ${RUNS} times each`, () => {
    for (const [trigger, run, breadcrumb] of TRIGGERS) {
      it(`${trigger}: every exit 0, no native crash`, async () => {
        const outcomes = await repeat(() => run(kind));
        expect(outcomes).toHaveLength(RUNS);
        for (const o of outcomes) {
          expect({ code: o.code, signal: o.signal }, o.stderr).toEqual({ code: 0, signal: null });
          expect(o.stderr).not.toMatch(NATIVE);
          expect(o.stderr).toContain(breadcrumb);
        }
        const running = outcomes.filter((o) => o.running).length;
        console.log(`${name}, ${trigger}: a call was running natively at close in ${running}/${RUNS} runs`);
        expect(running).toBeGreaterThan(0);
      }, 900_000);
    }
  });
}
