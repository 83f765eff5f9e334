import { describe, expect, it } from 'vitest';
import { absoluteModelSpec, chooseModel } from '../../src/llm/model-choice.js';

describe('chooseModel', () => {
  const given = { spec: '/named.gguf', source: 'flag' as const };

  it('a named model beats the index’s, which beats the default', () => {
    expect(chooseModel(given, '/index.gguf', 'hf:d/d/d.gguf')).toEqual(given);
    expect(chooseModel(undefined, '/index.gguf', 'hf:d/d/d.gguf')).toEqual({ spec: '/index.gguf', source: 'index' });
    expect(chooseModel(undefined, null, 'hf:d/d/d.gguf')).toEqual({ spec: 'hf:d/d/d.gguf', source: 'default' });
  });

  it('none of the three: no model (searches are BM25 only)', () => {
    expect(chooseModel(undefined, null, undefined)).toBeUndefined();
    expect(chooseModel(undefined, undefined, undefined)).toBeUndefined();
  });
});

describe('absoluteModelSpec', () => {
  it('makes a local path absolute against the directory given; leaves URIs and absolute paths', () => {
    expect(absoluteModelSpec('m.gguf', '/work')).toBe('/work/m.gguf');
    expect(absoluteModelSpec('../models/m.gguf', '/work/notes')).toBe('/work/models/m.gguf');
    expect(absoluteModelSpec('/abs/m.gguf', '/work')).toBe('/abs/m.gguf');
    for (const uri of ['hf:a/b/c.gguf', 'huggingface:a/b:Q8_0', 'HF:a/b/c.gguf', 'https://x.org/m.gguf']) {
      expect(absoluteModelSpec(uri, '/work')).toBe(uri);
    }
  });
});
