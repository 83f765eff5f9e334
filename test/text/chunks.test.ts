import { describe, expect, it } from 'vitest';
import {
  advanceBytes,
  chunkerId,
  chunkNote,
  MAX_CHUNK_BYTES,
  promptFormat,
  splitMarkdown,
  TOKEN_MARGIN,
} from '../../src/text/chunks.js';

const bytes = (text: string): number => Buffer.byteLength(text);
const paragraph = (word: string, count: number): string =>
  Array.from({ length: count }, (_, i) => `${word} ${i}.`).join(' ');

describe('splitMarkdown', () => {
  it('keeps a short note whole, as one chunk from line 1', () => {
    const text = '# Title\n\nA short note.\n';
    expect(splitMarkdown(text, 500)).toEqual([{ seq: 0, start: 0, end: text.length, line: 1 }]);
  });

  it('breaks at headings when it can, and does not overlap across them', () => {
    const sections = ['# One', '## Two', '## Three'].map(
      (h) => `${h}\n\n${paragraph(h.replace(/#/g, '').trim(), 20)}\n`,
    );
    const text = sections.join('\n');
    const spans = splitMarkdown(text, 300);
    for (const span of spans) expect(bytes(text.slice(span.start, span.end))).toBeLessThanOrEqual(300);
    const starts = spans.map((s) => text.slice(s.start, s.start + 6));
    expect(starts).toContain('## Two');
    expect(starts).toContain('## Thr');
    // The chunk that ends before a heading ends exactly there: no overlap into the next section.
    const two = spans.find((s) => text.startsWith('## Two', s.start));
    expect(spans.some((s) => s.end === two?.start)).toBe(true);
  });

  it('splits a long section at line or sentence ends, with overlap, covering every character', () => {
    const text = `# Long\n\n${paragraph('word', 200)}\n`;
    const spans = splitMarkdown(text, 400);
    expect(spans.length).toBeGreaterThan(3);
    expect(spans[0]?.start).toBe(0);
    expect(spans.at(-1)?.end).toBe(text.length);
    for (let i = 1; i < spans.length; i++) {
      const [previous, current] = [spans[i - 1]!, spans[i]!];
      expect(current.start).toBeGreaterThan(previous.start);
      expect(current.start).toBeLessThanOrEqual(previous.end); // no gap
      expect(current.start).toBeLessThan(previous.end); // overlap inside a section
      expect(text.slice(current.start, current.end)).toMatch(/^\S/); // starts at a word
    }
    // Cuts fall after a sentence (". "), not inside a word.
    for (const span of spans.slice(0, -1)) expect(text.slice(span.end - 2, span.end)).toBe('. ');
  });

  it('never breaks at a "heading" inside a fenced code block', () => {
    const code = Array.from({ length: 30 }, (_, i) => (i === 15 ? '# not a heading' : `echo line ${i}`)).join('\n');
    const text = `# Script\n\n\`\`\`sh\n${code}\n\`\`\`\n`;
    const spans = splitMarkdown(text, 300);
    expect(spans.some((s) => text.startsWith('# not a heading', s.start))).toBe(false);
  });

  it('reports the 1-based line each chunk starts on', () => {
    const text = `# A\n\n${paragraph('a', 40)}\n\n# B\n\n${paragraph('b', 40)}\n`;
    for (const span of splitMarkdown(text, 200)) {
      expect(span.line).toBe(text.slice(0, span.start).split('\n').length);
    }
  });

  it('counts UTF-8 bytes, not characters, and never splits a surrogate pair', () => {
    const text = `# Émoji\n\n${'😀 é '.repeat(300)}\n`;
    const spans = splitMarkdown(text, 200);
    for (const span of spans) {
      const slice = text.slice(span.start, span.end);
      expect(bytes(slice)).toBeLessThanOrEqual(200);
      expect(slice).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect(advanceBytes('😀x', 0, 4)).toBe(2);
    expect(advanceBytes('😀x', 0, 5)).toBe(3);
    expect(advanceBytes('😀x', 0, 3)).toBe(2); // below one character: still one whole code point
  });

  it('drops whitespace-only spans and numbers chunks from 0 without gaps', () => {
    const spans = splitMarkdown(`\n\n\n${'   \n'.repeat(200)}# T\n\ntext\n`, 120);
    expect(spans.map((s) => s.seq)).toEqual(spans.map((_, i) => i));
    expect(splitMarkdown('   \n\n  ', 100)).toEqual([]);
  });
});

describe('chunkNote', () => {
  it('sizes chunks so prompt and text fit the model: never more bytes than maxTokens allows', () => {
    const body = `# Tiny\n\n${paragraph('searching notes', 300)}\n`;
    for (const spec of ['/m/tiny.gguf', 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf']) {
      const format = promptFormat(spec);
      const chunks = chunkNote(body, 509, format);
      for (const chunk of chunks) expect(bytes(chunk.text)).toBeLessThanOrEqual(509 - TOKEN_MARGIN);
    }
    const big = chunkNote(body, 2045, promptFormat('/m/tiny.gguf'));
    for (const chunk of big) expect(bytes(chunk.text)).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
  });

  it('uses EmbeddingGemma prompts for that model only, and the chunker id says which', () => {
    const body = '# Bread\n\nFlour, water, salt.\n';
    const gemma = promptFormat('hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf');
    expect(chunkNote(body, 2045, gemma)[0]?.text).toBe(`title: Bread | text: ${body}`);
    expect(gemma.query('rye')).toBe('task: search result | query: rye');
    expect(chunkNote('no heading here', 2045, gemma)[0]?.text).toBe('title: none | text: no heading here');
    const plain = promptFormat('/models/tiny.gguf');
    expect(chunkNote(body, 2045, plain)[0]?.text).toBe(body);
    expect(chunkerId(509, plain)).not.toBe(chunkerId(509, gemma));
    expect(chunkerId(509, plain)).not.toBe(chunkerId(2045, plain));
  });

  it('is deterministic: the same text gives the same chunks and hashes', () => {
    const body = `# Same\n\n${paragraph('same', 120)}\n`;
    const format = promptFormat('/m/tiny.gguf');
    expect(chunkNote(body, 509, format)).toEqual(chunkNote(body, 509, format));
    const hashes = chunkNote(body, 509, format).map((c) => c.hash);
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
