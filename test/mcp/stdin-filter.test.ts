import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createStdinFilter } from '../../src/mcp/stdio/stdin-filter.js';

async function run(chunks: string[], maxLineBytes: number, checkJson = false) {
  const stdin = new PassThrough();
  const refused: number[] = [];
  const malformed: string[] = [];
  const filter = createStdinFilter(stdin, {
    maxLineBytes,
    onOversized: (n) => refused.push(n),
    ...(checkJson && { onMalformed: (e: SyntaxError) => malformed.push(e.name) }),
  });
  let out = '';
  filter.stream.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const ended = new Promise((resolve) => filter.stream.on('end', resolve));
  for (const c of chunks) stdin.write(c);
  stdin.end();
  await ended;
  return { out, refused, malformed };
}

describe('the stdin line filter', () => {
  it('passes whole lines through, however the chunks split them', async () => {
    const { out, refused } = await run(['{"a":', '1}\n{"b"', ':2}\n', '{"c":3}\n'], 100);
    expect(out).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
    expect(refused).toEqual([]);
  });

  it('drops a line over the limit up to its newline and keeps the next one whole', async () => {
    const long = 'x'.repeat(50);
    const { out, refused } = await run([`{"ok":1}\n${long.slice(0, 20)}`, long.slice(20), `\n{"next":2}\n`], 30);
    expect(out).toBe('{"ok":1}\n{"next":2}\n');
    expect(refused).toEqual([51]);
  });

  it('holds an unfinished line back instead of passing a prefix', async () => {
    const { out } = await run(['{"partial":'], 100);
    expect(out).toBe('');
  });

  it('with onMalformed: drops and reports a line that is not JSON, drops blank lines, keeps the rest', async () => {
    const { out, malformed } = await run(['{"a":1}\nnot json\n', '\n  \n{"b":', '2}\n{broken\n'], 100, true);
    expect(out).toBe('{"a":1}\n{"b":2}\n');
    expect(malformed).toEqual(['SyntaxError', 'SyntaxError']);
  });

  it('without onMalformed: passes lines through unparsed', async () => {
    const { out, malformed } = await run(['not json\n'], 100);
    expect(out).toBe('not json\n');
    expect(malformed).toEqual([]);
  });
});
