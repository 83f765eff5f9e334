/**
 * Embeddings through the built binary: `qmd embed`, `vsearch`, `query`, and
 * `qmd mcp` with a warm model leaving cleanly (while llama.cpp computes: model-teardown.test.ts).
 * The real tiny model (generated), real node-llama-cpp, real SQLite. Tests wait for
 * observable events (a stderr line, an exit) with generous bounds and kill children in
 * `finally`; nothing asserts a wall-clock time.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sqlite } from '../../src/store/sqlite.js';
import { ChildTransport } from '../support/child-transport.js';
import { generateCorpus } from '../support/corpus.js';
import { tinyModelPath } from '../support/gguf.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold RAM and the index.\n',
  'sqlite.md': '# SQLite\n\nWAL mode lets readers and a writer share the index. Checkpoint on close.\n',
  'garden/basil.md': '# Basil\n\nBasil and tomatoes grow together in summer.\n',
};

const ws = tempWorkspace(NOTES);
let model: string;
/** QMD_EMBED_THREADS=1: on these busy 2-core machines one llama.cpp thread is far faster. */
const env = (extra: Record<string, string> = {}) =>
  qmdEnv(ws.index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1', ...extra });

beforeAll(async () => {
  model = tinyModelPath();
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env());
  expect(added.code, added.stderr).toBe(0);
  const embedded = await runQmd(['embed'], env());
  expect(embedded.code, embedded.stderr).toBe(0);
});
afterAll(() => ws.cleanup());

async function json<T>(args: string[], extra: Record<string, string> = {}): Promise<T> {
  const run = await runQmd(args, env(extra));
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

interface EmbedJson {
  documents: number;
  chunks: number;
  embedded: number;
  skipped: number;
  removed: number;
}

describe('qmd embed, vsearch and query', () => {
  it('embed is incremental: a second run embeds nothing, a changed note only its chunks', async () => {
    const again = await runQmd(['embed'], env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Embedded 0 chunks, skipped \d+ unchanged, removed 0 .* chunks\/s \[model .*\]\n$/);

    appendFileSync(join(ws.notesDir, 'sqlite.md'), 'A busy timeout avoids SQLITE_BUSY.\n');
    expect((await runQmd(['update'], env())).code).toBe(0);
    const report = await json<EmbedJson>(['embed', '--json']);
    expect(report).toMatchObject({ documents: 1, embedded: 1, removed: 1, skipped: report.chunks - 1 });
  });

  it('embed -f embeds every chunk again, as qmd 2.x does; the next run has nothing to do', async () => {
    const forced = await json<EmbedJson>(['embed', '-f', '--json']);
    expect(forced.chunks).toBeGreaterThan(0);
    expect(forced).toMatchObject({ embedded: forced.chunks, skipped: 0 });
    expect(await json<EmbedJson>(['embed', '--json'])).toMatchObject({ embedded: 0, skipped: forced.chunks });
  });

  it('vsearch and query answer as JSON; -n limits; --explain; --embed-model beats QMD_EMBED_MODEL; a fallback says why', async () => {
    type Results = Array<{ file: string; score: number }>;
    const vector = await runQmd(['vsearch', NOTES['bread.md'] as string, '--json'], env());
    expect(vector.code, vector.stderr).toBe(0);
    expect((JSON.parse(vector.stdout) as Results)[0]?.file).toBe('qmd://notes/bread.md');
    const hybrid = await runQmd(['query', 'sourdough starter', '--json', '-n', '2'], env());
    const hits = JSON.parse(hybrid.stdout) as Results;
    expect(hits).toHaveLength(2);
    expect(hits[0]?.file).toBe('qmd://notes/bread.md');
    // --explain says how each ran.
    const explained = await runQmd(['query', 'sourdough starter', '--json', '--explain'], env());
    expect((JSON.parse(explained.stdout) as Array<{ explain: unknown }>)[0]?.explain).toEqual({
      mode: 'hybrid',
      // The test environment turns the reranker and the expansion off (qmdEnv): no note for either.
      reranked: false,
      searches: [
        { type: 'lex', query: 'sourdough starter', ran: 'bm25', candidates: expect.any(Number) },
        { type: 'vec', query: 'sourdough starter', ran: 'vector', candidates: expect.any(Number) },
      ],
    });
    // The flag wins over the variable: a bad flag makes query fall back to BM25, saying why:
    // on stderr in the terminal format, in `explain` with --json.
    const flagged = await runQmd(['--embed-model', join(ws.dir, 'missing.gguf'), 'query', 'sourdough'], env());
    expect(flagged.code, flagged.stderr).toBe(0);
    // The warning names the file once; the note under it does not say it again.
    expect(flagged.stderr).toMatch(
      /^QMD Warning: no embedding model file at .*missing\.gguf .*searching with BM25 only$/m,
    );
    expect(flagged.stderr).toMatch(/^\(bm25: the embedding model is unavailable: BM25 only\)$/m);
    expect(flagged.stderr.split('missing.gguf').length - 1).toBe(1);
    expect(flagged.stdout).toMatch(/^qmd:\/\/notes\/bread\.md:\d+ #[0-9a-f]{8}$/m);
    const flaggedJson = await runQmd(
      ['--embed-model', join(ws.dir, 'missing.gguf'), 'query', 'sourdough', '--json', '--explain'],
      env(),
    );
    const first = (
      JSON.parse(flaggedJson.stdout) as Array<{ file: string; explain: { mode: string; note: string } }>
    )[0];
    expect(first).toMatchObject({
      file: 'qmd://notes/bread.md',
      explain: { mode: 'bm25', note: expect.stringContaining('unavailable') },
    });
  });

  it('a SIGKILL during qmd embed loses at most the batch in flight; the next run resumes', async () => {
    const big = tempWorkspace({});
    try {
      generateCorpus(big.notesDir, { files: 6, seed: 5 });
      const benv = qmdEnv(big.index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' });
      expect((await runQmd(['collection', 'add', big.notesDir], benv)).code).toBe(0);
      const child = spawnProcess(process.execPath, [QMD_BIN, 'embed', '--batch', '4'], {
        env: { ...benv, QMD_DEBUG_EMBED: '1' },
      });
      try {
        await child.waitForStderr(/(entering llama\.cpp[\s\S]*){11}/, 60_000);
        child.child.kill('SIGKILL');
        expect((await waitForExit(child)).signal).toBe('SIGKILL');
      } finally {
        child.kill();
      }
      const db = new Sqlite(big.index);
      expect(db.value('PRAGMA quick_check')).toBe('ok');
      const saved = db.value('SELECT count(*) FROM embeddings') as number;
      db.close();
      expect(saved % 4).toBe(0); // whole batches only
      expect(saved).toBeGreaterThanOrEqual(8);
      const resumed = await json<EmbedJson>(['--index', big.index, 'embed', '--json']);
      expect(resumed.skipped).toBe(saved);
      expect(resumed.embedded).toBe(resumed.chunks - saved);
    } finally {
      big.cleanup();
    }
  });
});

/** A preload that reports on stderr when node-llama-cpp is resolved, in any process it runs in. */
function llamaWatcher(): string {
  const dir = join(ws.dir, 'hooks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'resolve.mjs'),
    `import { writeSync } from 'node:fs';
let said = false;
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (!said && result.url.includes('/node_modules/node-llama-cpp/')) {
    said = true;
    writeSync(2, 'HOOK: node-llama-cpp loaded\\n');
  }
  return result;
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister('./resolve.mjs', import.meta.url);\n`);
  return register;
}

describe('lazy loading', () => {
  it('qmd search and qmd mcp start-up never load node-llama-cpp; the first vector query does', async () => {
    const hook = llamaWatcher();
    const search = spawnProcess(process.execPath, ['--import', hook, QMD_BIN, 'search', 'sourdough'], { env: env() });
    search.child.stdin?.end();
    expect(await waitForExit(search)).toEqual({ code: 0, signal: null });
    expect(search.stdout()).toContain('notes/bread.md');
    expect(search.stderr()).not.toContain('HOOK');

    const server = spawnProcess(process.execPath, ['--import', hook, QMD_BIN, 'mcp'], { env: env() });
    const transport = new ChildTransport(server.child);
    try {
      const client = new Client({ name: 'lazy', version: '1.0.0' });
      await client.connect(transport);
      await client.listTools();
      await client.callTool({ name: 'status', arguments: {} });
      expect(server.stderr()).not.toContain('HOOK');
      const result = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect((result.structuredContent as { mode: string }).mode).toBe('hybrid');
      expect(server.stderr()).toContain('HOOK: node-llama-cpp loaded');
      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
    } finally {
      server.kill();
    }
  });
});

describe('qmd mcp with a warm model', () => {
  it('exits promptly on stdin EOF: breadcrumb, model and database released, no -wal', async () => {
    // A drain bound of 1 ms: one trigger now drains in-flight calls (stdin EOF no longer aborts
    // them), so the store is disposed under a running native call only when the drain is cut
    // short; the deadline does that on the first trigger, as a slow call would with the default.
    const server = spawnMcp(env({ QMD_DEBUG_EMBED: '1', QMD_DRAIN_TIMEOUT_MS: '1' }));
    const transport = new ChildTransport(server.child);
    try {
      const client = new Client({ name: 'warm', version: '1.0.0' });
      await client.connect(transport);
      const result = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      const structured = result.structuredContent as { mode: string; results: Array<{ file: string }> };
      expect(structured.mode).toBe('hybrid');
      expect(structured.results[0]?.file).toBe('notes/bread.md');
      expect((result.content as Array<{ text: string }>)[0]?.text).toMatch(
        /^Found \d+ results? for "sourdough starter" \(hybrid\):/,
      );
      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      const stderr = server.stderr();
      expect(stderr).toContain('Shutting down (stdin closed)...');
      expect(stderr).toContain('QMD debug: closing: 0 embedding call(s) running natively, 0 queued');
      expect(stderr).toContain('QMD debug: embedding model disposed');
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
    } finally {
      server.kill();
    }
  });
});

// The crash rounds (a client leaving while an embedding runs natively, 30 times each by EOF,
// SIGTERM and parent death) are in model-teardown.test.ts, with a generation and a ranking.
