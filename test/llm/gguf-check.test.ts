/**
 * `ggufProblem`: what a file is, from its header, without llama.cpp. Whole models (the tests'
 * generated embedding model, reranker and generator) pass; the same bytes cut anywhere, a web
 * page, binary junk do not; a quantized tensor's bytes are counted by its ggml type (a header
 * written here by hand: one Q8_0 and one Q4_K tensor).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggufProblem, magicProblem } from '../../src/llm/gguf-check.js';
import { encodeGguf, tinyModelPath } from '../support/gguf.js';
import { buildTinyGenerator, buildTinyReranker } from '../support/gguf-models.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-gguf-check-'));
let n = 0;
function file(bytes: Buffer): string {
  const path = join(dir, `f${n++}.gguf`);
  writeFileSync(path, bytes);
  return path;
}

const model = readFileSync(tinyModelPath());

describe('ggufProblem', () => {
  it('passes whole models: the embedding model, the reranker, the generator', async () => {
    expect(await ggufProblem(file(model))).toBeUndefined();
    expect(await ggufProblem(file(encodeGguf(buildTinyReranker())))).toBeUndefined();
    expect(await ggufProblem(file(encodeGguf(buildTinyGenerator())))).toBeUndefined();
  });

  it('refuses the model cut short anywhere: one byte, half, inside the header', async () => {
    expect(await ggufProblem(file(model.subarray(0, model.length - 1)))).toBe(
      `it was cut short (${model.length - 1} bytes, of the ${model.length} its header describes)`,
    );
    expect(await ggufProblem(file(model.subarray(0, 1000)))).toBe(
      'it was cut short (1000 bytes, ending inside its header)',
    );
    for (const at of [16, 4096, 100_000, 300_000]) {
      expect(await ggufProblem(file(model.subarray(0, at)))).toMatch(/^it was cut short \(/);
    }
  });

  it('names a web page and binary junk by their first bytes', async () => {
    expect(await ggufProblem(file(Buffer.from('<!DOCTYPE html><html><body>Log in</body></html>')))).toBe(
      'it is a web page (HTML), not a GGUF model',
    );
    expect(await ggufProblem(file(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0])))).toBe(
      'it is not a GGUF model (it starts with 0x504b0304, not "GGUF")',
    );
    expect(await ggufProblem(file(Buffer.from('{"error":"Repository not found"}')))).toBe(
      'it is not a GGUF model (it starts with "{"er", not "GGUF")',
    );
    expect(await ggufProblem(file(Buffer.from('GG')))).toBe('it is 2 bytes long, too short to be a model');
    expect(magicProblem(Buffer.from('GGUF'))).toBeUndefined();
  });

  it('counts a quantized tensor by its ggml type: Q8_0 (34 bytes per 32) and Q4_K (144 per 256)', async () => {
    // 2 rows of 64 Q8_0 (2 blocks each: 2 × 2 × 34 = 136 bytes), then 1 row of 256 Q4_K (144 bytes) at offset 160.
    const header = handMadeHeader([
      { name: 'a', dims: [64, 2], type: 8, offset: 0 },
      { name: 'b', dims: [256], type: 12, offset: 160 },
    ]);
    const dataStart = Math.ceil(header.length / 32) * 32;
    const whole = Buffer.concat([header, Buffer.alloc(dataStart - header.length + 160 + 144)]);
    expect(await ggufProblem(file(whole))).toBeUndefined();
    expect(await ggufProblem(file(whole.subarray(0, whole.length - 1)))).toBe(
      `it was cut short (${whole.length - 1} bytes, of the ${whole.length} its header describes)`,
    );
  });
});

function handMadeHeader(tensors: Array<{ name: string; dims: number[]; type: number; offset: number }>): Buffer {
  const parts: Buffer[] = [Buffer.from('GGUF')];
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    parts.push(b);
  };
  const u64 = (v: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    parts.push(b);
  };
  const str = (s: string) => {
    u64(Buffer.byteLength(s));
    parts.push(Buffer.from(s));
  };
  u32(3);
  u64(tensors.length);
  u64(1);
  str('general.architecture');
  u32(8);
  str('llama');
  for (const t of tensors) {
    str(t.name);
    u32(t.dims.length);
    for (const d of t.dims) u64(d);
    u32(t.type);
    u64(t.offset);
  }
  return Buffer.concat(parts);
}
