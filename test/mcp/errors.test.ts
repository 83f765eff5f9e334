import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathEscapeCases } from '../support/path-escape.js';
import { type Harness, startHarness, textOf } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** After every refusal the same server still answers a good call. */
async function expectStillServing(): Promise<void> {
  const result = await h.call('get', { file: 'notes/pools.md' });
  expect(result.isError).toBeFalsy();
}

describe('schema-invalid arguments', () => {
  // Measured, SDK 2.4.0: the SDK validates with our zod schemas before the handler runs and
  // answers with an isError result "Input validation error: Invalid arguments for tool T:
  // ARG: <issue>; …", not a JSON-RPC error.
  it.each([
    ['a number for a string', 'query', { query: 42 }, 'query'],
    ['a missing required argument', 'query', {}, 'query'],
    ['a negative limit', 'query', { query: 'wal', limit: -1 }, 'limit'],
    ['a fractional limit', 'query', { query: 'wal', limit: 2.5 }, 'limit'],
    ['a limit above 100', 'query', { query: 'wal', limit: 101 }, 'limit'],
    ['a string for a number', 'query', { query: 'wal', limit: '5' }, 'limit'],
    ['minScore above 1', 'query', { query: 'wal', minScore: 1.5 }, 'minScore'],
    ['a blank query', 'query', { query: '   ' }, 'query'],
    ['a huge query', 'query', { query: 'wal '.repeat(100_000) }, 'query'],
    ['collections that is not an array', 'query', { query: 'wal', collections: 'notes' }, 'collections'],
    ['both query and searches', 'query', { query: 'wal', searches: [{ type: 'lex', query: 'wal' }] }, 'searches'],
    ['an unknown sub-search type', 'query', { searches: [{ type: 'sql', query: 'wal' }] }, 'searches.0.type'],
    ['a blank sub-search', 'query', { searches: [{ type: 'vec', query: ' ' }] }, 'searches.0.query'],
    ['a sub-search with an unknown key', 'query', { searches: [{ type: 'lex', query: 'wal', w: 2 }] }, 'searches.0'],
    ['eleven sub-searches', 'query', { searches: Array(11).fill({ type: 'lex', query: 'wal' }) }, 'searches'],
    ['candidateLimit 0', 'query', { query: 'wal', candidateLimit: 0 }, 'candidateLimit'],
    ['a blank intent', 'query', { query: 'wal', intent: '  ' }, 'intent'],
    ['rerank that is not a boolean', 'query', { query: 'wal', rerank: 'yes' }, 'rerank'],
    ['fromLine 0', 'get', { file: 'notes/pools.md', fromLine: 0 }, 'fromLine'],
    ['negative maxLines', 'get', { file: 'notes/pools.md', maxLines: -3 }, 'maxLines'],
    ['a huge file reference', 'get', { file: 'a/'.repeat(50_000) }, 'file'],
    ['a huge pattern', 'multi_get', { pattern: '*,'.repeat(500_000) }, 'pattern'],
    ['maxBytes 0', 'multi_get', { pattern: 'notes/*.md', maxBytes: 0 }, 'maxBytes'],
    ['maxBytes above the ceiling', 'multi_get', { pattern: 'notes/*.md', maxBytes: 9 * 1024 * 1024 }, 'maxBytes'],
    ['maxLines 0 in multi_get', 'multi_get', { pattern: 'notes/*.md', maxLines: 0 }, 'maxLines'],
    ['a string for lineNumbers', 'get', { file: 'notes/pools.md', lineNumbers: 'yes' }, 'lineNumbers'],
  ])('refuses %s with an error result naming the argument', async (_label, tool, args, argument) => {
    const result = await h.call(tool, args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`Invalid arguments for tool ${tool}`);
    expect(textOf(result)).toMatch(new RegExp(`: ${argument}: `));
    expect(textOf(result).length).toBeLessThan(1_000);
    await expectStillServing();
  });

  it('refuses a huge collections array before parsing it (maxToolInputElements)', async () => {
    const result = await h.call('query', { query: 'wal', collections: Array.from({ length: 100_000 }, () => 'x') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/arguments contain more than the maximum of \d+ elements/);
    await expectStillServing();
  });

  it.each([
    [
      'get',
      { file: 'notes/pools.md', linenumbers: true },
      'unknown argument linenumbers: get takes file, fromLine, maxLines, lineNumbers',
    ],
    [
      'get',
      { file: 'notes/pools.md', from: 3, lines: 2 },
      'unknown arguments from, lines: get takes file, fromLine, maxLines, lineNumbers',
    ],
    [
      'multi_get',
      { pattern: 'notes/*.md', max_bytes: 10 },
      'unknown argument max_bytes: multi_get takes pattern, maxLines, maxBytes, lineNumbers',
    ],
  ])('refuses unknown arguments to %s with a clear one-line error', async (tool, args, message) => {
    // They used to be stripped silently: a misspelt maxLines read the whole document.
    const result = await h.call(tool, args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`Input validation error: Invalid arguments for tool ${tool}: ${message}`);
    await expectStillServing();
  });

  it("accepts every argument the peer's get and multi_get take", async () => {
    const get = await h.call('get', { file: 'notes/pools.md', fromLine: 2, maxLines: 1, lineNumbers: false });
    expect(get.isError).toBeFalsy();
    const multi = await h.call('multi_get', { pattern: 'notes/*.md', maxLines: 1, maxBytes: 1000, lineNumbers: true });
    expect(multi.isError).toBeFalsy();
  });

  it('refuses an unknown query argument, naming it and the known ones (a misspelt minScore would be lost)', async () => {
    const result = await h.call('query', { query: 'wal', min_score: 0.5 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(
      'unknown argument min_score: query takes query, searches, limit, minScore, candidateLimit, collections, folder, intent, rerank',
    );
    expect((await h.call('status', { verbose: true })).isError).toBe(true);
    await expectStillServing();
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    // Measured, SDK 2.4.0: -32602 "Tool nope not found" as a protocol error, not an isError result.
    await expect(h.call('nope')).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('nope') });
    await expectStillServing();
  });

  it('answers arguments that are not an object with a JSON-RPC error and keeps serving', async () => {
    // The SDK's own request schema refuses it before any tool code; the typed client cannot
    // send it, so it is forced here.
    await expect(h.client.callTool({ name: 'query', arguments: 'wal' as never })).rejects.toThrow(/arguments/);
    await expectStillServing();
  });
});

describe('queries full of search syntax', () => {
  it.each([
    '"unbalanced',
    'AND OR NOT',
    '*',
    'title:wal',
    'NEAR(wal pool)',
    '-wal',
    '^wal',
    '(((',
    '🦆 wal',
    "wal' OR 1=1 --",
  ])('%j is answered, not thrown', async (query) => {
    const result = await h.call('query', { query });
    if (result.isError) expect(textOf(result)).not.toContain('\n');
    else expect(result.structuredContent).toMatchObject({ mode: 'bm25', results: expect.any(Array) });
  });
});

describe('only indexed documents can be read', () => {
  // The path-escape table: the same answer from every surface, never a byte of what is outside.
  const cases = () => pathEscapeCases({ dir: h.dir, notes: `${h.dir}/notes` });
  const leaks = /zebrafish|hunter2|root:/;

  it('get refuses every case of the path-escape table', async () => {
    for (const { input, verdict } of cases()) {
      const result = await h.call('get', { file: input });
      expect(result.isError, input).toBe(true);
      expect(textOf(result), input).not.toMatch(leaks);
      expect(textOf(result), input).not.toContain('\n');
      // `bad` cases blank after trimming are refused by the schema before the store.
      if (verdict === 'outside') expect(textOf(result), input).toContain('is outside the indexed collections');
      if (verdict === 'indexOnly') expect(textOf(result), input).toMatch(/^No indexed document/);
    }
  });

  it('multi_get refuses every case alone, and a list with an outside one in it as a whole', async () => {
    for (const { input, verdict } of cases()) {
      const alone = await h.call('multi_get', { pattern: input });
      expect(alone.isError, input).toBe(true);
      expect(JSON.stringify(alone), input).not.toMatch(leaks);
      const listed = await h.call('multi_get', { pattern: `notes/pools.md, ${input}` });
      expect(JSON.stringify(listed), input).not.toMatch(leaks);
      if (verdict === 'outside') expect(listed.isError, input).toBe(true);
    }
  });

  it('resource reads refuse every case, as a qmd:// URI', async () => {
    for (const { input } of cases()) {
      const uri = /^qmd:\/\//i.test(input) ? input : `qmd://${input}`;
      const outcome = await h.client.readResource({ uri }).then(
        (read) => ({ read }),
        (error: Error & { code?: number }) => ({ error }),
      );
      expect(JSON.stringify(outcome), input).not.toMatch(leaks);
      if ('error' in outcome) {
        expect(outcome.error.code, input).toBe(-32602);
        continue;
      }
      // The client's URL parser folds `./` segments (`qmd://notes/./pools.md` is sent as
      // qmd://notes/pools.md): what comes back is then an indexed document under another URI.
      expect(outcome.read.contents[0]?.uri, input).not.toBe(uri);
      expect(outcome.read.contents[0]?.uri, input).toBe(new URL(uri).href);
    }
  });

  it('reads an absolute path inside a collection root as the indexed document', async () => {
    const result = await h.call('get', { file: `${h.dir}/notes/pools.md` });
    expect(result.structuredContent).toMatchObject({ file: 'notes/pools.md' });
  });

  it('a glob over everything stays inside the collections', async () => {
    for (const pattern of ['**/*.md', '**', '*', `${h.dir}/notes/**`]) {
      const result = await h.call('multi_get', { pattern });
      expect(JSON.stringify(result.content), pattern).not.toMatch(leaks);
    }
  });

  it('a malformed percent-escape is a bad argument, not a crash', async () => {
    await expect(h.client.readResource({ uri: 'qmd://notes/%E0%A4%A.md' })).rejects.toMatchObject({ code: -32602 });
    await expectStillServing();
  });

  it('nothing unexpected was logged: every refusal above was an expected error', () => {
    expect(h.log.warnings).toEqual([]);
  });
});

describe('a store that fails', () => {
  it('answers every tool with a one-line error result once the store is closed, and keeps serving', async () => {
    const own = await startHarness();
    try {
      await own.store.close();
      for (const [tool, args] of [
        ['query', { query: 'wal' }],
        ['get', { file: 'notes/pools.md' }],
        ['multi_get', { pattern: 'notes/*.md' }],
        ['status', {}],
      ] as const) {
        const result = await own.call(tool, args);
        expect(result.isError, tool).toBe(true);
        expect(textOf(result)).not.toContain('\n');
        expect(textOf(result)).not.toMatch(/\bat .+:\d+:\d+/);
      }
      expect(own.gate.size).toBe(0);
      // The client is still connected and answered: the server did not go down with the store.
      expect((await own.client.listTools()).tools).toHaveLength(4);
    } finally {
      await own.close();
    }
  });
});
