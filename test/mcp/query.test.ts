/**
 * The `query` tool with qmd 2.8's arguments and contexts, over a
 * real SDK client: a real store, and for the vector paths the real tiny generated model.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFailpoints } from '../../src/failpoints.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { IDLE_REPORT } from '../support/fake-watcher.js';
import { probedGate } from '../support/gate-probe.js';
import { tinyModelPath } from '../support/gguf.js';
import { type Harness, startHarness, textOf } from './harness.js';

interface Structured {
  mode: string;
  note?: string;
  searches: Array<{ type: string; query: string; ran: string; candidates: number }>;
  reranked: boolean;
  rerankNote?: string;
  results: Array<{ file: string; score: number; snippet: string; context?: string }>;
}
const structured = (result: { structuredContent?: unknown }): Structured => result.structuredContent as Structured;

// Holds the process's one Llama for the whole file (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });

describe('on an embedded index', () => {
  let h: Harness;
  beforeAll(async () => {
    await keeper.dimensions();
    h = await startHarness({ store: { embedModel: tinyModelPath(), embedThreads: 1 }, embed: true });
  });
  afterAll(async () => {
    await h.close();
    await keeper.dispose();
  });

  it('a plain query is hybrid: its lex and vec sub-searches both ran', async () => {
    const result = await h.call('query', { query: 'WAL checkpoints' });
    expect(result.isError).toBeFalsy();
    const s = structured(result);
    expect(s.mode).toBe('hybrid');
    expect(s.note).toBeUndefined();
    expect(s.searches.map((r) => [r.type, r.query, r.ran])).toEqual([
      ['lex', 'WAL checkpoints', 'bm25'],
      ['vec', 'WAL checkpoints', 'vector'],
    ]);
    expect(s.reranked).toBe(false);
    expect(s.results[0]).toMatchObject({ file: 'notes/sqlite.md', score: 1 });
    for (const r of s.results) expect(r.score).toBeGreaterThan(0);
    expect(textOf(result)).toMatch(/^Found \d+ results for "WAL checkpoints" \(hybrid\):\n\n#/);
  });

  it('searches: each sub-search runs and is fused; the text says what each ran as', async () => {
    const result = await h.call('query', {
      searches: [
        { type: 'lex', query: 'basil' },
        { type: 'vec', query: 'what grows in the garden' },
        { type: 'hyde', query: 'Basil sprouted after the tomatoes were watered.' },
      ],
      limit: 3,
    });
    const s = structured(result);
    expect(s.mode).toBe('hybrid');
    expect(s.searches.map((r) => r.ran)).toEqual(['bm25', 'vector', 'vector']);
    expect(s.searches[0]?.candidates).toBe(3);
    expect(s.results).toHaveLength(3);
    expect(s.results[0]?.score).toBe(1);
    for (const r of s.results) expect(r.score).toBeLessThanOrEqual(1);
    const text = textOf(result);
    expect(text).toMatch(/^Found 3 results for "basil" \(hybrid\):\nSearches: lex "basil" → bm25, 3 candidates; /);
    expect(text).toContain('vec "what grows in the garden" → vector, ');
    expect(text).toContain('hyde "Basil sprouted after the tomatoes were watered." → vector, ');
  });

  it('vec or hyde alone ranks by meaning (mode vector)', async () => {
    for (const type of ['vec', 'hyde']) {
      const s = structured(await h.call('query', { searches: [{ type, query: 'connection pools' }], limit: 2 }));
      expect(s.mode).toBe('vector');
      expect(s.results).toHaveLength(2);
      expect(s.results[0]?.score).toBe(1);
    }
  });

  it('candidateLimit bounds the fused candidates, so the results; minScore drops the weak', async () => {
    const bounded = structured(
      await h.call('query', {
        searches: [
          { type: 'lex', query: 'basil' },
          { type: 'vec', query: 'basil' },
        ],
        candidateLimit: 1,
      }),
    );
    expect(bounded.results).toHaveLength(1);
    const strong = structured(await h.call('query', { query: 'basil', minScore: 1 }));
    for (const r of strong.results) expect(r.score).toBe(1);
  });

  it('rerank: true with no reranking model configured: the result says it was not reranked', async () => {
    const result = await h.call('query', { query: 'basil', rerank: true });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toMatchObject({
      reranked: false,
      rerankNote: 'not reranked: no reranking model is configured',
    });
    expect(textOf(result).split('\n')[1]).toBe('Not reranked: no reranking model is configured.');
    const unasked = structured(await h.call('query', { query: 'basil' }));
    expect(unasked.rerankNote).toBeUndefined();
  });

  it('intent with nothing to shape is said to be unused, in the text too', async () => {
    const result = await h.call('query', { searches: [{ type: 'lex', query: 'basil' }], intent: 'cooking' });
    expect(structured(result).note).toBe('intent unused: it shapes vec searches and the reranker, and neither ran');
    expect(textOf(result)).toContain('(bm25: intent unused: it shapes vec searches and the reranker, and neither ran)');
  });

  it('folder narrows BM25 and vectors alike to a folder inside the collections', async () => {
    // The control: unfiltered, the keyword matches at the collection's root lead.
    const all = structured(await h.call('query', { query: 'WAL checkpoints', limit: 20 }));
    expect(all.results.map((r) => r.file)).toEqual(expect.arrayContaining(['notes/sqlite.md', 'notes/pools.md']));
    const result = await h.call('query', { query: 'WAL checkpoints', folder: 'deep', limit: 20 });
    expect(result.isError).toBeFalsy();
    const s = structured(result);
    expect(s.mode).toBe('hybrid');
    expect(s.searches.map((r) => [r.type, r.ran, r.candidates])).toEqual([
      ['lex', 'bm25', 0],
      ['vec', 'vector', 1],
    ]);
    expect(s.results.map((r) => r.file)).toEqual(['notes/deep/nested.md']);
    const journal = await h.call('query', { query: 'WAL checkpoints', folder: 'deep', collections: ['journal'] });
    expect(structured(journal).results).toEqual([]);
  });

  it('while the watcher re-embeds changed notes, a hybrid result says vectors are catching up; BM25 alone does not', async () => {
    // The server `qmd mcp` builds over this store, its watcher reporting 3 notes not yet re-embedded.
    const server = createMcpServer({
      store: h.store,
      gate: probedGate().gate,
      failpoints: parseFailpoints(undefined),
      log: silentLog,
      version: '0.0.0-test',
      watch: () => ({ ...IDLE_REPORT, vectorsPending: 3 }),
    });
    const client = new Client({ name: 'catching-up', version: '0.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      await client.listTools();
      const hybrid = await client.callTool({ name: 'query', arguments: { query: 'WAL checkpoints' } });
      expect(structured(hybrid)).toMatchObject({
        mode: 'hybrid',
        note: 'vectors are catching up: 3 notes changed since they were embedded',
      });
      expect(textOf(hybrid)).toMatch(/\(hybrid: vectors are catching up: 3 notes changed since they were embedded\):/);
      const lex = await client.callTool({
        name: 'query',
        arguments: { searches: [{ type: 'lex', query: 'WAL checkpoints' }] },
      });
      expect(structured(lex).mode).toBe('bm25');
      expect(structured(lex).note ?? '').not.toContain('catching up');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('searches: [] beside query is no sub-search, as in qmd 2.8', async () => {
    const s = structured(await h.call('query', { query: 'basil', searches: [] }));
    expect(s.searches.map((r) => r.type)).toEqual(['lex', 'vec']);
  });
});

describe('with no model configured, and contexts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      contexts: {
        '/': 'Personal notes of one developer.',
        journal: 'A garden diary, one note per day.',
        'notes/deep': 'Long-form research.',
      },
    });
  });
  afterAll(() => h.close());

  it('vector sub-searches are skipped and the result says so; lex answers', async () => {
    const result = await h.call('query', {
      searches: [
        { type: 'lex', query: 'basil' },
        { type: 'vec', query: 'herbs' },
      ],
    });
    const s = structured(result);
    expect(s).toMatchObject({ mode: 'bm25', note: 'no embedding model is configured: BM25 only' });
    expect(s.searches.map((r) => [r.type, r.ran, r.candidates])).toEqual([
      ['lex', 'bm25', 3],
      ['vec', 'skipped', 0],
    ]);
    expect(textOf(result)).toContain('Searches: lex "basil" → bm25, 3 candidates; vec "herbs" → skipped');
  });

  it('only vector sub-searches: they run as BM25 over their text, and say so', async () => {
    const s = structured(await h.call('query', { searches: [{ type: 'vec', query: 'aardvark' }] }));
    expect(s.searches).toEqual([{ type: 'vec', query: 'aardvark', ran: 'bm25', candidates: 1 }]);
    expect(s.results.map((r) => r.file)).toEqual(['notes/deep/nested.md']);
  });

  it('a folder that could leave the collections is a one-line error, and the server goes on; "" is no folder', async () => {
    for (const [folder, message] of [
      ['../secret.md', /^folder "\.\.\/secret\.md" climbs out of the collection/],
      ['deep/%2e%2e/%2e%2e', /climbs out of the collection/],
      ['/etc', /^folder "\/etc" is not inside a collection/],
      ['deep/./x', /empty or "\." segment/],
    ] as const) {
      const result = await h.call('query', { query: 'zebrafish', folder });
      expect(result.isError, folder).toBe(true);
      expect(textOf(result)).toMatch(message);
      expect(textOf(result)).not.toContain('\n');
    }
    const wrongType = await h.call('query', { query: 'aardvark', folder: 5 });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toContain('folder');
    const blank = structured(await h.call('query', { query: 'aardvark', folder: '' }));
    expect(blank.results.map((r) => r.file)).toEqual(['notes/deep/nested.md']);
    const inside = structured(await h.call('query', { query: 'aardvark quokka', folder: 'deep/' }));
    expect(inside.results.map((r) => r.file)).toEqual(['notes/deep/nested.md']);
  });

  it('each result carries the contexts that cover it, in structuredContent and text', async () => {
    const basil = await h.call('query', { query: 'basil', limit: 1 });
    expect(structured(basil).results[0]?.context).toBe(
      'Personal notes of one developer.\n\nA garden diary, one note per day.',
    );
    expect(textOf(basil)).toContain('  Context: Personal notes of one developer. A garden diary, one note per day.');
    const deep = structured(await h.call('query', { query: 'aardvark' })).results[0];
    expect(deep).toMatchObject({
      file: 'notes/deep/nested.md',
      context: 'Personal notes of one developer.\n\nLong-form research.',
    });
    const pools = structured(await h.call('query', { query: 'pool leases' })).results[0];
    expect(pools?.context).toBe('Personal notes of one developer.');
  });

  it('the server’s instructions summarise the contexts', () => {
    const instructions = h.client.getInstructions() ?? '';
    expect(instructions).toContain('What the notes are (contexts; each result they cover carries its `context`):');
    expect(instructions).toContain('  - /: Personal notes of one developer.');
    expect(instructions).toContain('  - journal: A garden diary, one note per day.');
    expect(instructions).toContain('  - notes/deep: Long-form research.');
    expect(instructions).toContain('`searches`');
  });

  it('status lists them', async () => {
    const s = (await h.call('status')).structuredContent as { contexts: Array<{ path: string; text: string }> };
    expect(s.contexts.map((c) => c.path)).toEqual(['/', 'journal', 'notes/deep']);
  });
});
