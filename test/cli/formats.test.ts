/** The peer's formats (`src/cli/formats/`): the pieces the spawned comparison cannot pin exactly. */
import { describe, expect, it } from 'vitest';
import { formatCollectionList, formatLs, lsTime, timeAgo } from '../../src/cli/formats/collections.js';
import { formatHits } from '../../src/cli/formats/hits.js';
import { csvField, numberLines, outputFormat } from '../../src/cli/formats/output-format.js';
import { showHit } from '../../src/cli/formats/snippet.js';
import { outputStyle, PLAIN_OUTPUT } from '../../src/cli/terminal/terminal.js';
import type { SearchHit } from '../../src/core/types.js';

describe('outputFormat', () => {
  it('--format wins, then the legacy flags in qmd 2.x order, else cli; an unknown kind is one error', () => {
    expect(outputFormat({})).toBe('cli');
    expect(outputFormat({ json: true, csv: true })).toBe('csv');
    expect(outputFormat({ files: true, json: true })).toBe('files');
    expect(outputFormat({ format: ' JSON ', csv: true })).toBe('json');
    expect(() => outputFormat({ format: 'yaml' })).toThrow(
      'Unknown --format yaml: use one of cli, json, csv, md, xml, files',
    );
  });

  it('quotes a CSV field only when it must; numbers lines from the first given', () => {
    expect([csvField('a'), csvField('a,b'), csvField('say "hi"'), csvField('x\ny'), csvField(undefined)]).toEqual([
      'a',
      '"a,b"',
      '"say ""hi"""',
      '"x\ny"',
      '',
    ]);
    expect(numberLines('a\nb', 7)).toBe('7: a\n8: b');
  });
});

describe('formatHits --explain', () => {
  it('puts the run on each result: an explain object in JSON, an Explain: line after Score in the terminal', () => {
    const hit: SearchHit = {
      file: 'n/a.md',
      docid: '#12345678',
      collection: 'n',
      path: 'a.md',
      title: 'A',
      score: 1,
      snippet: '',
    };
    const explain = {
      mode: 'bm25',
      note: 'nothing is embedded yet: BM25 only (run qmd embed)',
      searches: [{ type: 'lex', query: 'wal', ran: 'bm25', candidates: 1 }],
    };
    const shown = [showHit(hit, '# A\n\nwal\n')];
    expect(JSON.parse(formatHits(shown, 'json', { explain }))[0].explain).toEqual(explain);
    expect(formatHits(shown, 'cli', { explain }).split('\n').slice(2, 4)).toEqual([
      'Score: 100%',
      'Explain: bm25 (nothing is embedded yet: BM25 only (run qmd embed)); lex "wal" bm25 1',
    ]);
    expect(formatHits(shown, 'cli')).not.toContain('Explain:');
  });
});

describe('formatHits on a terminal', () => {
  const hit: SearchHit = {
    file: 'n/a.md',
    docid: '#12345678',
    collection: 'n',
    path: 'a.md',
    title: 'A',
    context: 'Kitchen notes',
    score: 0.5,
    snippet: '',
    line: 3,
    snippetRange: { fromLine: 3, lines: 1 },
  };
  const shown = [showHit(hit, '# A\n\nSourdough needs a sourdough starter and time\n')];

  it("colours qmd 2.x's layout, marks the query's words, cuts the snippet to the width and leaves the URI whole", () => {
    const style = outputStyle({ isTTY: true, columns: 20 }, {});
    const lines = formatHits(shown, 'cli', { style, query: 'sourdough' }).split('\n');
    expect(lines[0]).toBe('\x1b[36mqmd://n/a.md\x1b[39m\x1b[2m:3\x1b[22m \x1b[2m#12345678\x1b[22m');
    expect(lines[1]).toBe('\x1b[1mTitle: A\x1b[22m');
    expect(lines[3]).toBe('Score: \x1b[33m 50%\x1b[39m');
    // The snippet's line: the word marked, cut to 19 columns, a reset after the cut.
    expect(lines.at(-1)).toBe('\x1b[1;33mSourdough\x1b[22;39m needs a …\x1b[0m');
    expect(lines.at(-3)).toBe('@@ -3,1 @@ (2 befo…');
    // Wide enough: every word the query begins is marked, whatever its case.
    const wide = formatHits(shown, 'cli', { style: outputStyle({ isTTY: true, columns: 80 }, {}), query: 'SOURDOUGH' });
    expect(wide.split('\n').at(-1)).toBe(
      '\x1b[1;33mSourdough\x1b[22;39m needs a \x1b[1;33msourdough\x1b[22;39m starter and time',
    );
  });

  it('NO_COLOR: cut to the width, no escape; piped (the default): plain and whole', () => {
    const noColour = formatHits(shown, 'cli', {
      style: outputStyle({ isTTY: true, columns: 20 }, { NO_COLOR: '1' }),
      query: 'sourdough',
    });
    expect(noColour).not.toContain('\x1b');
    expect(noColour.split('\n').at(-1)).toBe('Sourdough needs a …');
    const piped = formatHits(shown, 'cli', { style: PLAIN_OUTPUT, query: 'sourdough' });
    expect(piped).toBe(formatHits(shown, 'cli'));
    expect(piped.split('\n').at(-1)).toBe('Sourdough needs a sourdough starter and time');
  });
});

describe('showHit', () => {
  const hit = (range?: { fromLine: number; lines: number }): SearchHit => ({
    file: 'n/a.md',
    docid: '#12345678',
    collection: 'n',
    path: 'a.md',
    title: 'A',
    score: 1,
    snippet: '',
    ...(range !== undefined && { snippetRange: range, line: range.fromLine }),
  });

  it("heads the snippet's lines with @@ -FROM,COUNT @@ (B before, A after), counted in the document", () => {
    const text = '# A\n\none\ntwo\nthree\n';
    expect(showHit(hit({ fromLine: 3, lines: 2 }), text)).toMatchObject({
      header: '@@ -3,2 @@ (2 before, 2 after)',
      lines: 'one\ntwo',
      firstLine: 3,
    });
    // A range past the end is cut at the end; no range shows the first lines.
    expect(showHit(hit({ fromLine: 5, lines: 9 }), text).header).toBe('@@ -5,2 @@ (4 before, 0 after)');
    expect(showHit(hit(), text).header).toBe('@@ -1,4 @@ (0 before, 2 after)');
  });
});

describe('collections and ls', () => {
  const now = Date.parse('2026-12-04T12:00:00Z');

  it('timeAgo and lsTime read as qmd 2.x and ls -l write them', () => {
    expect([59, 60, 3600, 86_400 * 3].map((s) => timeAgo(now - s * 1000, now))).toEqual([
      '59s ago',
      '1m ago',
      '1h ago',
      '3d ago',
    ]);
    const recent = new Date(2026, 11, 4, 9, 5);
    expect(lsTime(recent, recent.getTime())).toBe('Dec  4 09:05');
    expect(lsTime(new Date(2024, 5, 1), recent.getTime())).toBe('Jun  1  2024');
  });

  it('collection list: a block per collection, [excluded] and Ignore when there are', () => {
    const text = formatCollectionList(
      [
        {
          name: 'wiki',
          root: '/w',
          mask: 'a.md,b/*.md',
          ignore: ['x/**'],
          includeByDefault: false,
          documents: 2,
          updatedAt: new Date(now - 30_000).toISOString(),
        },
      ],
      now,
    );
    expect(text).toBe(
      'Collections (1):\n\nwiki (qmd://wiki/) [excluded]\n  Pattern:  a.md,b/*.md\n  Ignore:   x/**\n  Files:    2\n  Updated:  30s ago\n\n',
    );
    expect(formatLs([], 'wiki/none')).toBe('No files found under qmd://wiki/none');
  });
});
