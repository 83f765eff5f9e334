/**
 * The environment doctor prints (src/cli/doctor/environment.ts): every variable that changes
 * what qmd does, with what it changes; a secret only as "set"; an unknown `QMD_*` named as one.
 */
import { describe, expect, it } from 'vitest';
import { environmentOverrides } from '../../../src/cli/doctor/environment.js';
import { age } from '../../../src/cli/doctor/report.js';

describe('environment overrides', () => {
  it('lists what is set, in a fixed order, blank ones left out; never prints a token', () => {
    const found = environmentOverrides({
      QMD_HTTP_TOKEN: 'sekrit-value',
      HF_TOKEN: 'hf_abcdef',
      QMD_INDEX: '/notes/index.sqlite',
      QMD_GPU: '   ',
      PATH: '/usr/bin',
    });
    expect(found.map((o) => [o.name, o.value])).toEqual([
      ['QMD_INDEX', '/notes/index.sqlite'],
      ['QMD_HTTP_TOKEN', '(set; not shown)'],
      ['HF_TOKEN', '(set; not shown)'],
    ]);
    expect(JSON.stringify(found)).not.toMatch(/sekrit|hf_abc/);
  });

  it('names a QMD_ variable this qmd does not read, and a test-only one, and shortens a long value', () => {
    const found = environmentOverrides({
      QMD_EMBED_MODLE: 'x.gguf',
      QMD_TEST_VERSION: '9',
      QMD_INDEX: 'a'.repeat(200),
    });
    expect(found.find((o) => o.name === 'QMD_EMBED_MODLE')?.means).toMatch(/not a variable this qmd reads/);
    expect(found.find((o) => o.name === 'QMD_TEST_VERSION')?.means).toMatch(/for tests only/);
    expect(found.find((o) => o.name === 'QMD_INDEX')?.value).toHaveLength(96);
  });
});

describe('ages', () => {
  it('in the largest unit that reads well', () => {
    expect([0, 59_999, 60_000, 3_600_000 + 5 * 60_000, 2 * 86_400_000 + 4 * 3_600_000, -1].map(age)).toEqual([
      '0 s',
      '59 s',
      '1 min',
      '1 h 5 min',
      '2 d 4 h',
      '?',
    ]);
  });
});
