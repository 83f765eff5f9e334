import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { asciiOnly } from '../../scripts/build.js';

describe('asciiOnly (every script the build writes)', () => {
  it('leaves nothing outside ASCII, and an ASCII text as it was', () => {
    const text = '// a comment — with “quotes”, → and 😀\nconst x = 1;\n';
    expect(/[\u0080-\uffff]/.test(asciiOnly(text))).toBe(false);
    expect(asciiOnly(text)).toBe(
      '// a comment \\u2014 with \\u201cquotes\\u201d, \\u2192 and \\ud83d\\ude00\nconst x = 1;\n',
    );
    expect(asciiOnly('const y = "plain";')).toBe('const y = "plain";');
  });

  it('means the same program: in a string, a template and a regular expression the escape is the same character', () => {
    const program = [
      '/* § legal — notice */',
      'const s = "a—b😀";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of the program, run below
      'const t = `c→${s}`;',
      'const r = /é+/.test("ééé");',
      '[s, t, r, s.length]',
    ].join('\n');
    const escaped = asciiOnly(program);
    expect(escaped).not.toBe(program);
    expect(runInNewContext(escaped)).toEqual(runInNewContext(program));
  });
});
