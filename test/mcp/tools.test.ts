import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, textOf } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('initialize', () => {
  it('names the server and says which collections exist and how to use the tools', () => {
    expect(h.client.getServerVersion()).toMatchObject({ name: 'qmd', version: '0.0.0-test' });
    const instructions = h.client.getInstructions() ?? '';
    expect(instructions).toContain('"notes" (4 documents)');
    expect(instructions).toContain('"journal" (3 documents)');
    expect(instructions).toContain(h.dir);
    expect(instructions).toMatch(/`query`.*\n.*`get`/);
    expect(instructions).toContain('#docid');
  });
});

describe('tools/list', () => {
  it('lists the four tools with input and output schemas', async () => {
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get', 'multi_get', 'query', 'status']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // qmd 2.8's arguments: query or searches, neither required by the schema alone.
    expect(byName.query?.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: {
        query: { type: 'string', minLength: 1 },
        searches: {
          type: 'array',
          maxItems: 10,
          items: {
            type: 'object',
            required: ['type', 'query'],
            properties: { type: { enum: ['lex', 'vec', 'hyde'] }, query: { type: 'string', minLength: 1 } },
          },
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        minScore: { type: 'number', minimum: 0, maximum: 1 },
        candidateLimit: { type: 'integer', minimum: 1, maximum: 1000 },
        collections: { type: 'array', items: { type: 'string' } },
        folder: { type: 'string', maxLength: 4096 },
        intent: { type: 'string', minLength: 1 },
        rerank: { type: 'boolean' },
      },
    });
    expect(byName.query?.inputSchema.required).toBeUndefined();
    expect(byName.query?.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['mode', 'searches', 'reranked', 'results']),
      properties: { mode: { enum: ['bm25', 'vector', 'hybrid'] }, results: { type: 'array' } },
    });
    // qmd 2.8's arguments, and nothing else: unknown keys are refused.
    expect(byName.get?.inputSchema).toMatchObject({
      required: ['file'],
      additionalProperties: false,
      properties: {
        file: { type: 'string' },
        fromLine: { type: 'integer', minimum: 1 },
        maxLines: { type: 'integer', minimum: 1 },
        lineNumbers: { type: 'boolean', default: true },
      },
    });
    expect(Object.keys(byName.get?.inputSchema.properties ?? {}).sort()).toEqual([
      'file',
      'fromLine',
      'lineNumbers',
      'maxLines',
    ]);
    expect(byName.get?.outputSchema?.required).toEqual(
      expect.arrayContaining(['file', 'docid', 'title', 'fromLine', 'lines', 'totalLines']),
    );
    expect(byName.multi_get?.inputSchema).toMatchObject({
      required: ['pattern'],
      additionalProperties: false,
      properties: {
        pattern: { type: 'string' },
        maxLines: { type: 'integer', minimum: 1 },
        maxBytes: { type: 'integer', minimum: 1, default: 65536 },
        lineNumbers: { type: 'boolean', default: true },
      },
    });
    expect(Object.keys(byName.multi_get?.inputSchema.properties ?? {}).sort()).toEqual([
      'lineNumbers',
      'maxBytes',
      'maxLines',
      'pattern',
    ]);
    expect(byName.multi_get?.outputSchema?.required).toEqual(['documents', 'skipped']);
    expect(byName.status?.inputSchema).toMatchObject({ type: 'object', properties: {} });
    expect(byName.status?.outputSchema?.required).toEqual(
      expect.arrayContaining([
        'index',
        'documents',
        'collections',
        'embeddings',
        'totalDocuments',
        'needsEmbedding',
        'hasVectorIndex',
        'contexts',
      ]),
    );
    for (const tool of tools) expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });
});

describe('query', () => {
  it('returns ranked results with snippets, as text and structuredContent', async () => {
    const result = await h.call('query', { query: 'WAL' });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      mode: string;
      results: Array<{ file: string; docid: string; title: string; score: number; snippet: string }>;
    };
    expect(structured.mode).toBe('bm25');
    expect(structured.results.map((r) => r.file)).toEqual(['notes/sqlite.md', 'notes/pools.md']);
    const [first, second] = structured.results;
    expect(first?.title).toBe('SQLite tuning');
    expect(first?.docid).toMatch(/^#\w+$/);
    expect(first?.snippet.toLowerCase()).toContain('wal');
    expect(first?.score).toBeGreaterThan(second?.score ?? 1);
    for (const r of structured.results) expect(r.score).toBeGreaterThanOrEqual(0);
    for (const r of structured.results) expect(r.score).toBeLessThanOrEqual(1);

    const text = textOf(result);
    expect(text).toMatch(/^Found 2 results for "WAL" \(bm25/);
    expect(text).toContain(`${first?.docid} `);
    expect(text).toMatch(/notes\/sqlite\.md(:\d+)? - SQLite tuning/);
    expect(text.indexOf('notes/sqlite.md')).toBeLessThan(text.indexOf('notes/pools.md'));
  });

  it("gives each hit a snippet of its own document in qmd 2.8's form: the place, then each line numbered as in the note", async () => {
    for (const query of ['WAL', 'basil']) {
      const hits = (await h.call('query', { query })).structuredContent as {
        results: Array<{
          file: string;
          snippet: string;
          line?: number;
          snippetRange?: { fromLine: number; lines: number };
        }>;
      };
      expect(hits.results.length).toBeGreaterThan(0);
      for (const hit of hits.results) {
        const doc = textOf(await h.call('get', { file: hit.file, lineNumbers: false })).split('\n');
        const [header, ...numbered] = hit.snippet.split('\n');
        // `LINE: @@ -FROM,COUNT @@`, as the peer's tests match it (/^\d+: @@ -\d+,/).
        expect(header).toBe(`${hit.line}: @@ -${hit.snippetRange?.fromLine},${hit.snippetRange?.lines} @@`);
        expect(numbered).toHaveLength(hit.snippetRange!.lines);
        for (const [i, line] of numbered.entries()) {
          const [, n, text] = /^(\d+): (.*)$/s.exec(line) ?? [];
          expect(Number(n)).toBe(hit.snippetRange!.fromLine + i);
          // An excerpt: without its ** marks and … cuts, each piece is on that line of the note.
          for (const piece of (text ?? '').replaceAll('**', '').split('…'))
            expect(doc[Number(n) - 1]).toContain(piece.trim());
        }
      }
    }
  });

  it('honours limit', async () => {
    const result = await h.call('query', { query: 'WAL', limit: 1 });
    const structured = result.structuredContent as { results: Array<{ file: string }> };
    expect(structured.results.map((r) => r.file)).toEqual(['notes/sqlite.md']);
  });

  it('searches only the given collections', async () => {
    const everywhere = await h.call('query', { query: 'basil' });
    expect((everywhere.structuredContent as { results: unknown[] }).results).toHaveLength(3);
    const notesOnly = await h.call('query', { query: 'basil', collections: ['notes'] });
    expect(notesOnly.isError).toBeFalsy();
    expect((notesOnly.structuredContent as { results: unknown[] }).results).toEqual([]);
    expect(textOf(notesOnly)).toMatch(/^No results for "basil"/);
    const journal = await h.call('query', { query: 'basil', collections: ['journal'] });
    const files = (journal.structuredContent as { results: Array<{ file: string }> }).results.map((r) => r.file);
    expect(files.every((f) => f.startsWith('journal/'))).toBe(true);
  });

  it('treats an empty collections list as all of them, as the peer does', async () => {
    const result = await h.call('query', { query: 'basil', collections: [] });
    expect((result.structuredContent as { results: unknown[] }).results).toHaveLength(3);
  });

  it('turns an unknown collection into an error result', async () => {
    const result = await h.call('query', { query: 'basil', collections: ['nope'] });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('nope');
    expect(textOf(result)).not.toContain('\n');
    expect(result.structuredContent).toBeUndefined();
  });

  it('drops results below minScore', async () => {
    const all = (await h.call('query', { query: 'WAL' })).structuredContent as { results: Array<{ score: number }> };
    const top = all.results[0]?.score ?? 0;
    const filtered = await h.call('query', { query: 'WAL', minScore: top });
    const scores = (filtered.structuredContent as { results: Array<{ score: number }> }).results.map((r) => r.score);
    expect(scores.length).toBeGreaterThanOrEqual(1);
    expect(scores.length).toBeLessThan(all.results.length);
    for (const score of scores) expect(score).toBeGreaterThanOrEqual(top);
  });

  it('never finds text outside the collections', async () => {
    const result = await h.call('query', { query: 'zebrafish' });
    expect((result.structuredContent as { results: unknown[] }).results).toEqual([]);
  });
});

describe('get', () => {
  it('reads a whole document by path, its lines numbered as qmd 2.8 does', async () => {
    const result = await h.call('get', { file: 'notes/pools.md' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toHaveLength(1);
    expect(textOf(result)).toMatch(/^1: # Connection pools\n2: \n3: A pool hands out connections/);
    expect(result.structuredContent).toMatchObject({
      file: 'notes/pools.md',
      title: 'Connection pools',
      uri: 'qmd://notes/pools.md',
      fromLine: 1,
    });
    const meta = result.structuredContent as { lines: number; totalLines: number; docid: string };
    expect(meta.lines).toBe(meta.totalLines);
    expect(meta.docid).toMatch(/^#\w+$/);
  });

  it('gives the raw text with lineNumbers: false', async () => {
    const raw = await h.call('get', { file: 'notes/deep/nested.md', lineNumbers: false });
    expect(textOf(raw)).toBe('# Nested note\n\nAardvark migration patterns live here.\n');
  });

  it('reads by #docid the same document query returned', async () => {
    const hit = (await h.call('query', { query: 'aardvark' })).structuredContent as {
      results: Array<{ docid: string }>;
    };
    const docid = hit.results[0]?.docid ?? '';
    const result = await h.call('get', { file: docid });
    expect(result.structuredContent).toMatchObject({ file: 'notes/deep/nested.md', docid });
    expect(textOf(result)).toContain('Aardvark migration');
  });

  it('slices with fromLine and maxLines, numbered from fromLine, and says where the rest is', async () => {
    const result = await h.call('get', { file: 'notes/sqlite.md', fromLine: 3, maxLines: 2 });
    expect(result.structuredContent).toMatchObject({ fromLine: 3, lines: 2, totalLines: 40 });
    const [body, note] = result.content;
    // An embedded resource, as qmd 2.8 returns a document.
    expect(body).toEqual({
      type: 'resource',
      resource: {
        uri: 'qmd://notes/sqlite.md',
        mimeType: 'text/markdown',
        // Exactly the two lines: no line end after the last, so splitting on \n gives two.
        text: '3: Use WAL mode so readers never block the writer.\n4: Line 4: filler about pages and checkpoints.',
      },
    });
    expect(note).toEqual({ type: 'text', text: '[lines 3-4 of 40; more with fromLine=5]' });
  });

  it('accepts file.md:LINE and file.md:FROM:COUNT as the peer does, and the qmd:// URI of a document', async () => {
    const suffixed = await h.call('get', { file: 'notes/sqlite.md:40', maxLines: 5 });
    expect(suffixed.structuredContent).toMatchObject({ fromLine: 40, lines: 1, totalLines: 40 });
    const { docid } = suffixed.structuredContent as { docid: string };
    const byDocid = await h.call('get', { file: `${docid}:39` });
    expect(byDocid.structuredContent).toMatchObject({ file: 'notes/sqlite.md', fromLine: 39, lines: 2 });
    const range = await h.call('get', { file: 'notes/sqlite.md:3:1' });
    expect(textOf(range)).toMatch(/^3: Use WAL mode/);
    expect(range.structuredContent).toMatchObject({ fromLine: 3, lines: 1 });
    const byUri = await h.call('get', { file: 'qmd://notes/with%20space.md' });
    expect(byUri.structuredContent).toMatchObject({ file: 'notes/with space.md', uri: 'qmd://notes/with%20space.md' });
  });

  it('resolves references as qmd 2.8 does: no collection, a unique end, an absolute path', async () => {
    const cases: Array<[string, string]> = [
      ['deep/nested.md', 'notes/deep/nested.md'],
      ['nested.md', 'notes/deep/nested.md'],
      ['2025-06-01.md', 'journal/2025-06-01.md'],
      ['qmd://nested.md', 'notes/deep/nested.md'],
      [`${h.dir}/notes/pools.md`, 'notes/pools.md'],
      [`${h.dir}/journal/2025-05-02.md:3`, 'journal/2025-05-02.md'],
    ];
    for (const [file, expected] of cases) {
      const result = await h.call('get', { file });
      expect(result.isError, `${file}: ${textOf(result)}`).toBeFalsy();
      expect((result.structuredContent as { file: string }).file).toBe(expected);
    }
  });

  it('turns a missing document into a one-line error result with "Did you mean"', async () => {
    const result = await h.call('get', { file: 'notes/pool.md' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('No indexed document "notes/pool.md". Did you mean: notes/pools.md?');
    expect(h.log.warnings).toEqual([]);
  });
});

describe('multi_get', () => {
  it('reads documents by glob, each as an embedded resource with numbered lines', async () => {
    const result = await h.call('multi_get', { pattern: 'journal/2025-05-*.md' });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      documents: Array<{ file: string; truncated: boolean }>;
      skipped: unknown[];
    };
    expect(structured.documents.map((d) => d.file).sort()).toEqual(['journal/2025-05-01.md', 'journal/2025-05-02.md']);
    expect(structured.skipped).toEqual([]);
    const resources = result.content.filter((block) => block.type === 'resource');
    expect(resources.map((block) => block.resource.uri).sort()).toEqual([
      'qmd://journal/2025-05-01.md',
      'qmd://journal/2025-05-02.md',
    ]);
    expect(resources.map((block) => ('text' in block.resource ? block.resource.text : ''))).toContain(
      '1: # May first\n2: \n3: Planted tomatoes and basil.\n',
    );
    expect(textOf(result)).toMatch(/^2 documents, 0 skipped\./);
  });

  it('matches globs inside every collection, and takes the raw text on request', async () => {
    const result = await h.call('multi_get', { pattern: '**/2025-*.md', lineNumbers: false });
    const files = (result.structuredContent as { documents: Array<{ file: string }> }).documents.map((d) => d.file);
    expect(files).toEqual(['journal/2025-05-01.md', 'journal/2025-05-02.md', 'journal/2025-06-01.md']);
    const texts = result.content.flatMap((block) =>
      block.type === 'resource' && 'text' in block.resource ? [block.resource.text] : [],
    );
    expect(texts[0]).toBe('# May first\n\nPlanted tomatoes and basil.\n');
  });

  it('reads a comma list of paths and docids', async () => {
    const pools = (await h.call('get', { file: 'notes/pools.md' })).structuredContent as { docid: string };
    const result = await h.call('multi_get', { pattern: `journal/2025-06-01.md, ${pools.docid}` });
    const files = (result.structuredContent as { documents: Array<{ file: string }> }).documents.map((d) => d.file);
    expect(files.sort()).toEqual(['journal/2025-06-01.md', 'notes/pools.md']);
  });

  it('skips a file larger than maxBytes, per file, and lists why', async () => {
    const result = await h.call('multi_get', { pattern: 'journal/*.md, notes/sqlite.md', maxBytes: 60 });
    const structured = result.structuredContent as {
      documents: Array<{ file: string }>;
      skipped: Array<{ file: string; reason: string }>;
    };
    expect(structured.documents.map((d) => d.file)).toEqual([
      'journal/2025-05-01.md',
      'journal/2025-05-02.md',
      'journal/2025-06-01.md',
    ]);
    expect(structured.skipped).toEqual([
      { file: 'notes/sqlite.md', reason: expect.stringMatching(/^too large: \d+ bytes > maxBytes 60; use get/) },
    ]);
    expect(textOf(result)).toContain('skipped notes/sqlite.md: too large');
  });

  it('caps the lines of each file with maxLines, and says it did', async () => {
    const result = await h.call('multi_get', { pattern: 'notes/sqlite.md, notes/pools.md', maxLines: 2 });
    const structured = result.structuredContent as { documents: Array<{ lines: number; truncated: boolean }> };
    expect(structured.documents.map((d) => [d.lines, d.truncated])).toEqual([
      [2, true],
      [2, true],
    ]);
    expect(textOf(result)).toContain('notes/sqlite.md');
    expect(textOf(result)).toContain('(2 of 40 lines, truncated)');
  });
});

describe('status', () => {
  it('returns the StatusReport as structuredContent and a readable summary', async () => {
    const result = await h.call('status');
    expect(result.structuredContent).toMatchObject({
      index: h.store.path,
      documents: 7,
      collections: expect.arrayContaining([
        expect.objectContaining({ name: 'notes', documents: 4 }),
        expect.objectContaining({ name: 'journal', documents: 3 }),
      ]),
    });
    expect(textOf(result)).toContain(`Index: ${h.store.path}`);
    expect(textOf(result)).toMatch(/- notes: .*4 documents/);
  });

  it('has qmd 2.8’s fields beside ours, in structuredContent and text', async () => {
    const result = await h.call('status');
    const notes = h.store.listCollections().find((c) => c.name === 'notes');
    expect(result.structuredContent).toMatchObject({
      totalDocuments: 7,
      needsEmbedding: 7, // nothing is embedded in this index
      hasVectorIndex: false,
      contexts: [],
      collections: expect.arrayContaining([
        expect.objectContaining({
          name: 'notes',
          path: notes?.root,
          pattern: '**/*.md',
          lastUpdated: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        }),
      ]),
    });
    expect(textOf(result)).toContain('7 documents need embedding; vector index: no');
  });
});

describe('resources', () => {
  it('publishes the qmd://{+path} template', async () => {
    const { resourceTemplates } = await h.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: 'qmd://{+path}', mimeType: 'text/markdown' }),
    ]);
  });

  it('reads an indexed document, percent-encoded names included', async () => {
    const read = await h.client.readResource({ uri: 'qmd://notes/with%20space.md' });
    expect(read.contents).toEqual([
      { uri: 'qmd://notes/with%20space.md', mimeType: 'text/markdown', text: expect.stringContaining('Quokka') },
    ]);
  });

  it('lists indexed documents', async () => {
    const { resources } = await h.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toContain('qmd://notes/with%20space.md');
    expect(resources).toHaveLength(7);
  });

  it('answers a missing document with a JSON-RPC "resource not found" error', async () => {
    // The spec's "resource not found" since 2026-07-28 (SDK v2): -32602 with the URI as data.
    const uri = 'qmd://notes/missing.md';
    await expect(h.client.readResource({ uri })).rejects.toMatchObject({ code: -32602, data: { uri } });
  });
});

describe("qmd 2.8's words and shapes, where its clients and tests look for them", () => {
  it('multi_get: a list item that names no note is "File not found", with suggestions; the others are read', async () => {
    const result = await h.call('multi_get', { pattern: 'notes/pools.md, notes/pool.md' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^1 document, 1 skipped\./);
    expect(textOf(result)).toContain('File not found: notes/pool.md (did you mean: notes/pools.md?)');
    expect((result.structuredContent as { skipped: unknown[] }).skipped).toEqual([
      { file: 'notes/pool.md', reason: 'not found (did you mean: notes/pools.md?)' },
    ]);
  });

  it('multi_get: a glob that matches nothing is "No files matched pattern", said once, and no error', async () => {
    const result = await h.call('multi_get', { pattern: 'nowhere/*.md' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'No files matched pattern: nowhere/*.md' }]);
    const mixed = await h.call('multi_get', { pattern: 'nowhere/*.md, notes/pools.md' });
    expect(textOf(mixed)).toContain('  No files matched pattern: nowhere/*.md');
  });

  it('get and multi_get return each note as an embedded resource: its qmd:// URI, markdown, the text', async () => {
    const got = await h.call('get', { file: 'journal/2025-05-01.md', lineNumbers: false });
    expect(got.content).toEqual([
      {
        type: 'resource',
        resource: {
          uri: 'qmd://journal/2025-05-01.md',
          mimeType: 'text/markdown',
          text: '# May first\n\nPlanted tomatoes and basil.\n',
        },
      },
    ]);
    const many = await h.call('multi_get', { pattern: 'journal/2025-05-01.md' });
    expect(many.content.map((block) => block.type)).toEqual(['text', 'resource']);
  });
});
