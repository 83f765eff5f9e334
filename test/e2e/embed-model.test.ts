/**
 * The index remembers its embedding model, through the built binary as a person runs it:
 * `qmd embed --embed-model models/mine.gguf` once (a relative path), then `query`, `vsearch`,
 * `status`, `qmd mcp` and `qmd mcp --shared` from another directory with no model named use
 * the vectors; a different model is refused in one line and never mixed in. No model is
 * downloaded: the default model's host is a closed port, so a reader that fell back to the
 * default instead of the index's model would fail here.
 */
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath, writeTinyModel } from '../support/gguf.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { connectClient, startHttpServer } from './fixtures/http-server.js';
import { eventually, sharedServerPids } from './fixtures/shared.js';

const NOTES = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'garden.md': '# Garden\n\nBasil and tomatoes grow together in summer.\n',
};

const ws = tempWorkspace(NOTES);
const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
/** Where the commands run after `embed`: not where the model's relative path was given. */
const elsewhere = mkdtempSync(join(tmpdir(), 'qmd-elsewhere-'));
const modelsDir = join(ws.dir, 'models');
const model = join(modelsDir, 'mine.gguf');
const other = join(modelsDir, 'other.gguf');
let env: NodeJS.ProcessEnv;

type Results = { mode: string; note?: string; results: Array<{ file: string }> };

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  mkdirSync(modelsDir);
  copyFileSync(tinyModelPath(), model);
  writeTinyModel(other, { seed: 2 });
  env = qmdEnv(ws.index, {
    QMD_EMBED_THREADS: '1',
    XDG_RUNTIME_DIR: runtime,
    QMD_SHARED_IDLE_MS: '100',
    QMD_SHARED_CONNECT_MS: '30000',
    HF_ENDPOINT: `http://127.0.0.1:${await closedPort()}/`,
  });
  expect(env.QMD_EMBED_MODEL).toBeUndefined();
  expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
  const embedded = await runQmd(['--embed-model', 'models/mine.gguf', 'embed'], env, { cwd: ws.dir });
  expect(embedded.code, embedded.stderr).toBe(0);
  expect(embedded.stdout).toContain(`[model ${model};`);
});
afterAll(() => {
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  ws.cleanup();
  rmSync(runtime, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

/**
 * A search with `--json --explain`: qmd 2.x's array of results, each with `explain` (the mode
 * and why), read back as one `{ mode, note, results }` (`file` without its `qmd://`).
 */
async function json(args: string[], extra: Record<string, string> = {}): Promise<Results & { stderr: string }> {
  const run = await runQmd([...args, '--explain'], { ...env, ...extra }, { cwd: elsewhere });
  expect(run.code, run.stderr).toBe(0);
  const hits = JSON.parse(run.stdout) as Array<{ file: string; explain: { mode: string; note?: string } }>;
  expect(hits.length, run.stdout).toBeGreaterThan(0);
  const { mode, note } = (hits[0] as (typeof hits)[number]).explain;
  return {
    mode,
    ...(note !== undefined && { note }),
    results: hits.map((hit) => ({ file: hit.file.replace(/^qmd:\/\//, '') })),
    stderr: run.stderr,
  };
}

/** `qmd mcp ARGS`, a real client, one `query` call, a clean exit; the server's stderr. */
async function mcpQuery(args: string[], extra: Record<string, string> = {}) {
  const server = spawnProcess(process.execPath, [QMD_BIN, ...args], { env: { ...env, ...extra }, cwd: elsewhere });
  const transport = new ChildTransport(server.child);
  try {
    const client = new Client({ name: 'remembered-model', version: '1.0.0' });
    await client.connect(transport);
    const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
    expect(answer.isError, JSON.stringify(answer)).not.toBe(true);
    await transport.close();
    expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
    return { structured: answer.structuredContent as Results, stderr: server.stderr() };
  } finally {
    server.kill();
  }
}

const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('QMD Warning:'));

describe('embedded with a model named once, every reader uses it without being told', () => {
  it('query and vsearch from another directory: hybrid and vector, no warning', async () => {
    const hybrid = await json(['query', 'sourdough starter', '--json']);
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.results[0]?.file).toBe('notes/bread.md');
    expect(warnings(hybrid.stderr)).toEqual([]);
    const vector = await json(['vsearch', 'tomatoes and basil', '--json']);
    expect(vector.mode).toBe('vector');
    expect(vector.results.length).toBeGreaterThan(0);
  });

  it('status shows the model by absolute path with its fingerprint', async () => {
    const run = await runQmd(['status'], env, { cwd: elsewhere });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Embeddings: 2\/2 chunks embedded \(vectors: /m);
    expect(run.stdout).toContain(`Embedding model: ${model} (sha256:`);
  });

  it('qmd mcp over stdio: hybrid', async () => {
    const { structured, stderr } = await mcpQuery(['mcp']);
    expect(structured.mode).toBe('hybrid');
    expect(stderr).toContain(`embedding model loaded: ${model}`);
  });

  it('qmd mcp --shared: the shared server it starts uses the index’s model too', async () => {
    const { structured, stderr } = await mcpQuery(['mcp', '--shared']);
    expect(structured.mode).toBe('hybrid');
    expect(stderr).not.toContain('serving this client alone');
    await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone');
  });
  it('qmd mcp --http: hybrid over MCP', async () => {
    const server = await startHttpServer(env);
    try {
      const { client } = await connectClient(server.url, 'remembered-model-http');
      const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      expect(answer.structuredContent).toMatchObject({ mode: 'hybrid' });
      await client.close();
      server.p.child.kill('SIGTERM');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
    } finally {
      server.p.kill();
    }
  });
});

describe('a reader named another model refuses the index’s vectors, in one line', () => {
  const mismatch = (named: string) =>
    `the index is embedded with ${model}, and ${named} names another model (${other})`;

  it('query: BM25 with one warning; vsearch: exit 1 with one line saying the fix', async () => {
    const query = await json(['--embed-model', other, 'query', 'sourdough', '--json']);
    expect(query.mode).toBe('bm25');
    expect(query.note).toContain(mismatch('--embed-model'));
    expect(warnings(query.stderr)).toEqual([expect.stringContaining(mismatch('--embed-model'))]);
    const vsearch = await runQmd(['vsearch', 'sourdough'], { ...env, QMD_EMBED_MODEL: other }, { cwd: elsewhere });
    expect(vsearch.code).toBe(1);
    expect(vsearch.stdout).toBe('');
    expect(vsearch.stderr).toBe(
      `qmd: ${mismatch('QMD_EMBED_MODEL')}: leave QMD_EMBED_MODEL out to search with the index's model, ` +
        'or re-embed the index with it (qmd embed)\n',
    );
  });

  it('qmd mcp with QMD_EMBED_MODEL: BM25 and a note; --shared beside a server of the index’s model serves alone', async () => {
    const plain = await mcpQuery(['mcp'], { QMD_EMBED_MODEL: other });
    expect(plain.structured).toMatchObject({
      mode: 'bm25',
      note: expect.stringContaining(mismatch('QMD_EMBED_MODEL')),
    });
    expect(warnings(plain.stderr)).toHaveLength(1);

    // A shared server started for a client that named no model: a client naming another one
    // is not served by it (it would get the index's model without asking).
    const first = spawnProcess(process.execPath, [QMD_BIN, 'mcp', '--shared'], { env, cwd: elsewhere });
    const transport = new ChildTransport(first.child);
    try {
      const client = new Client({ name: 'first', version: '1' });
      await client.connect(transport);
      expect(
        (await client.callTool({ name: 'query', arguments: { query: 'sourdough' } })).structuredContent,
      ).toMatchObject({ mode: 'hybrid' });
      const second = await mcpQuery(['--embed-model', other, 'mcp', '--shared']);
      expect(second.structured.mode).toBe('bm25');
      expect(second.stderr).toContain(
        `shared server unavailable (it searches with the index's own embedding model, this client names ${other}); serving this client alone`,
      );
      await transport.close();
      expect(await waitForExit(first)).toEqual({ code: 0, signal: null });
    } finally {
      first.kill();
    }
  });
});

describe('the model file moved', () => {
  it('query says where it was and how to name its new place; embed --embed-model NEW remembers it, nothing re-embedded', async () => {
    const moved = join(ws.dir, 'moved.gguf');
    renameSync(model, moved);
    try {
      const query = await json(['query', 'sourdough', '--json']);
      expect(query.mode).toBe('bm25');
      expect(warnings(query.stderr)).toEqual([
        `QMD Warning: the index's embedding model ${model} is gone (moved or deleted?): name its new place with ` +
          '--embed-model PATH or QMD_EMBED_MODEL=PATH (qmd embed --embed-model PATH remembers it, nothing ' +
          're-embedded); searching with BM25 only',
      ]);
      const status = await runQmd(['status'], env, { cwd: elsewhere });
      expect(status.stdout).toContain(`Embedding model: ${model} (sha256:`);
      expect(status.stdout).toContain(': the file is gone (moved or deleted?)');
      const remembered = await runQmd(['--embed-model', moved, 'embed', '--json'], env, { cwd: elsewhere });
      expect(remembered.code, remembered.stderr).toBe(0);
      expect(remembered.stderr).toContain(
        `The index's embedding model is now at ${moved} (was ${model}; the same model, nothing to re-embed)`,
      );
      expect(JSON.parse(remembered.stdout)).toMatchObject({ embedded: 0, model: moved });
      expect((await json(['query', 'sourdough', '--json'])).mode).toBe('hybrid');
    } finally {
      // Back as the other tests expect it.
      renameSync(moved, model);
      expect((await runQmd(['--embed-model', model, 'embed'], env)).code).toBe(0);
    }
  });
});
