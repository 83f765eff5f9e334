/**
 * What a client switching from qmd 2.8 expects of fetched documents, through a real
 * SDK `Client` over memory: the contexts covering a document in `get`, `multi_get` and the
 * `qmd://` resource (text and structuredContent), snippets that say which lines they come
 * from, a sliced `get` that is exactly its lines, and cache hints on the 2026-07-28 lists.
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFailpoints } from '../../src/failpoints.js';
import { CACHE_HINTS, createMcpServer } from '../../src/mcp/server.js';
import { serveStdioConnection } from '../../src/mcp/stdio/connection.js';
import { ChildTransport } from '../support/child-transport.js';
import { probedGate } from '../support/gate-probe.js';
import { recordingLog } from '../support/recording-log.js';
import { type Harness, startHarness, textOf } from './harness.js';

const NOTES = 'Personal notes of one developer.';
const DEEP = 'Old migrations, kept for reference.';
const GLOBAL = 'Everything here is local.';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ contexts: { '/': GLOBAL, notes: NOTES, 'notes/deep': DEEP } });
});
afterAll(async () => {
  await h.close();
});

type Slice = { file: string; fromLine: number; lines: number; context?: string };
type Hits = { results: Array<{ file: string; snippetRange?: { fromLine: number; lines: number } }> };

describe('contexts on fetched documents', () => {
  it('get: a <!-- Context --> comment at the top of the text, and `context` in structuredContent', async () => {
    const result = await h.call('get', { file: 'notes/deep/nested.md', lineNumbers: false });
    const joined = `${GLOBAL}\n\n${NOTES}\n\n${DEEP}`;
    expect(result.content[0]).toEqual({
      type: 'resource',
      resource: {
        uri: 'qmd://notes/deep/nested.md',
        mimeType: 'text/markdown',
        text: `<!-- Context: ${joined} -->\n\n# Nested note\n\nAardvark migration patterns live here.\n`,
      },
    });
    expect((result.structuredContent as Slice).context).toBe(joined);
  });

  it('get: only the contexts that cover it (a journal note has the global one alone)', async () => {
    const result = await h.call('get', { file: 'journal/2025-05-01.md' });
    expect(textOf(result).startsWith(`<!-- Context: ${GLOBAL} -->\n\n1: # May first`)).toBe(true);
    expect((result.structuredContent as Slice).context).toBe(GLOBAL);
  });

  it('multi_get: each embedded document starts with its own contexts; structuredContent has them', async () => {
    const result = await h.call('multi_get', { pattern: 'notes/deep/nested.md, journal/2025-05-01.md' });
    const resources = result.content.filter((b) => b.type === 'resource');
    const texts = resources.map((b) => (b.type === 'resource' && 'text' in b.resource ? b.resource.text : ''));
    expect(texts[0]).toMatch(new RegExp(`^<!-- Context: ${GLOBAL}\\n\\n${NOTES}\\n\\n${DEEP} -->\\n\\n1: # Nested`));
    expect(texts[1]).toMatch(new RegExp(`^<!-- Context: ${GLOBAL} -->\\n\\n1: # May first`));
    const docs = (result.structuredContent as { documents: Slice[] }).documents;
    expect(docs.map((d) => [d.file, d.context])).toEqual([
      ['notes/deep/nested.md', `${GLOBAL}\n\n${NOTES}\n\n${DEEP}`],
      ['journal/2025-05-01.md', GLOBAL],
    ]);
  });

  it('resources/read: the qmd:// document carries the comment too', async () => {
    const read = await h.client.readResource({ uri: 'qmd://notes/with%20space.md' });
    const text = (read.contents[0] as { text: string }).text;
    expect(text).toBe(
      `<!-- Context: ${GLOBAL}\n\n${NOTES} -->\n\n# Spaced name\n\nQuokka sightings, recorded weekly.\n`,
    );
  });
});

describe('snippets say where they are', () => {
  it('each hit carries the absolute lines of its snippet: diff-style in the text, snippetRange in structuredContent', async () => {
    const result = await h.call('query', { query: 'aardvark' });
    const hit = (result.structuredContent as Hits).results[0];
    expect(hit?.file).toBe('notes/deep/nested.md');
    // The excerpt is the whole short note: its title (line 1) to "Aardvark …" (line 3).
    expect(hit?.snippetRange).toEqual({ fromLine: 1, lines: 3 });
    expect(textOf(result)).toMatch(/\n {2}@@ -1,3 @@ # Nested note \*\*Aardvark\*\* migration patterns/);
  });

  it('a client can read the snippet back by itself with get file:FROM:COUNT', async () => {
    const result = await h.call('query', { query: 'busy timeout' });
    const hit = (result.structuredContent as Hits).results[0];
    expect(hit?.file).toBe('notes/sqlite.md');
    const { fromLine, lines } = hit?.snippetRange ?? { fromLine: 0, lines: 0 };
    expect(fromLine).toBe(40);
    const read = await h.call('get', { file: `${hit?.file}:${fromLine}:${lines}`, lineNumbers: false });
    expect(textOf(read)).toContain('a busy timeout avoids SQLITE_BUSY');
  });
});

describe('a sliced get is exactly its lines', () => {
  it('notes/sqlite.md:2:2 splits into two lines, not two and an empty third', async () => {
    for (const lineNumbers of [true, false]) {
      const result = await h.call('get', { file: 'notes/sqlite.md:2:2', lineNumbers });
      const body = (result.content[0] as { resource: { text: string } }).resource.text.replace(
        /^<!-- Context:[\s\S]*?-->\n\n/,
        '',
      );
      expect(body.split('\n')).toHaveLength(2);
      expect(body.endsWith('\n')).toBe(false);
    }
  });

  it('a whole document keeps its final newline, as indexed', async () => {
    const result = await h.call('get', { file: 'journal/2025-05-01.md', lineNumbers: false });
    expect(textOf(result).endsWith('Planted tomatoes and basil.\n')).toBe(true);
  });
});

describe('2026-07-28 cache hints', () => {
  it('server/discover and tools/list say how long they are good for, private to this client', async () => {
    // The stdio connection qmd mcp runs (serveStdio picks the era), over in-memory pipes.
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const { gate } = probedGate();
    const connection = serveStdioConnection({
      createServer: () =>
        createMcpServer({
          store: h.store,
          gate,
          failpoints: parseFailpoints(undefined),
          log: recordingLog(),
          version: '0.0.0-test',
        }),
      stdin,
      stdout,
      log: recordingLog(),
      onClosed: () => {},
    });
    const pipes = Object.assign(new EventEmitter(), { stdin, stdout }) as unknown as ChildProcess;
    const transport = new ChildTransport(pipes);
    const client = new Client(
      { name: 'cache-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    try {
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await client.listTools();
      const results = transport.lines.map((line) => JSON.parse(line) as { result?: Record<string, unknown> });
      const discover = results.find((m) => m.result !== undefined && 'supportedVersions' in m.result)?.result;
      const tools = results.find((m) => m.result !== undefined && 'tools' in m.result)?.result;
      expect(discover).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
      expect(tools).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'private' });
      expect(CACHE_HINTS['tools/list'].ttlMs).toBe(3_600_000);
    } finally {
      await client.close().catch(() => {});
      await connection.close();
    }
  });
});

describe('index problems reach a client with their code', () => {
  it('a failed qmd:// read is a JSON-RPC error whose data carries the code the CLI would exit with', async () => {
    const own = await startHarness();
    try {
      await own.store.close();
      await expect(own.client.readResource({ uri: 'qmd://notes/sqlite.md' })).rejects.toMatchObject({
        code: -32603,
        data: { code: 'CLOSED' },
      });
    } finally {
      await own.close();
    }
  });
});
