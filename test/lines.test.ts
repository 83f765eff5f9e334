import { describe, expect, it } from 'vitest';
import { createLineReader } from '../src/lines.js';

function read(chunks: string[], maxBytes: number) {
  const lines: string[] = [];
  const refused: number[] = [];
  const feed = createLineReader({ maxBytes, onLine: (l) => lines.push(l), onOversized: (n) => refused.push(n) });
  for (const c of chunks) feed(Buffer.from(c));
  return { lines, refused };
}

describe('the line reader (stdio and the relay)', () => {
  it('gives whole lines, however the chunks split them; drops a trailing CR and blank lines', () => {
    const { lines, refused } = read(['{"a":', '1}\r\n{"b"', ':2}\n\n  \n', '{"c":3}\n'], 100);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(refused).toEqual([]);
  });

  it('drops a line over the limit up to its newline, reports its bytes without the newline, and keeps the next one whole', () => {
    const long = 'x'.repeat(50);
    const { lines, refused } = read([`{"ok":1}\n${long.slice(0, 20)}`, long.slice(20), `\n{"next":2}\n`], 30);
    expect(lines).toEqual(['{"ok":1}', '{"next":2}']);
    expect(refused).toEqual([50]);
  });

  it('holds an unfinished line back instead of giving a prefix', () => {
    expect(read(['{"partial":'], 100).lines).toEqual([]);
  });
});
