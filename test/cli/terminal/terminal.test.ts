import { describe, expect, it } from 'vitest';
import { fitWidth, paintFor, terminalOf, visibleLength } from '../../../src/cli/terminal/terminal.js';

describe('terminalOf', () => {
  it('a terminal: colour unless NO_COLOR (non-empty) or TERM=dumb; its width', () => {
    const tty = { isTTY: true, columns: 100 };
    expect(terminalOf(tty, {})).toMatchObject({ tty: true, colour: true });
    expect(terminalOf(tty, {}).width()).toBe(100);
    expect(terminalOf(tty, { NO_COLOR: '1' }).colour).toBe(false);
    expect(terminalOf(tty, { NO_COLOR: '' }).colour).toBe(true);
    expect(terminalOf(tty, { TERM: 'dumb' }).colour).toBe(false);
  });

  it('anything else: no colour, 80 columns; a terminal of width 0 also 80', () => {
    expect(terminalOf({}, {})).toMatchObject({ tty: false, colour: false });
    expect(terminalOf({}, {}).width()).toBe(80);
    expect(terminalOf({ isTTY: true, columns: 0 }, {}).width()).toBe(80);
  });

  it('follows a resize', () => {
    const stream = { isTTY: true, columns: 100 };
    const terminal = terminalOf(stream, {});
    stream.columns = 50;
    expect(terminal.width()).toBe(50);
  });
});

describe('fitWidth', () => {
  it('leaves a short line alone, cuts a long one with …', () => {
    expect(fitWidth('hello', 10)).toBe('hello');
    expect(fitWidth('hello world', 8)).toBe('hello w…');
    expect(visibleLength(fitWidth('x'.repeat(100), 40))).toBe(40);
  });

  it('escape sequences cost nothing, are kept whole, and a cut styled line ends with a reset', () => {
    const paint = paintFor({ colour: true });
    const line = `${paint.bold('Embedding')} ${'y'.repeat(50)}`;
    expect(visibleLength(line)).toBe(60);
    const cut = fitWidth(line, 20);
    expect(visibleLength(cut)).toBe(20);
    expect(cut.startsWith('\x1b[1mEmbedding\x1b[22m')).toBe(true);
    expect(cut.endsWith('…\x1b[0m')).toBe(true);
  });

  it('counts a code point as one column', () => {
    expect(visibleLength('█░é')).toBe(3);
    expect(fitWidth('ééééé', 3)).toBe('éé…');
  });
});
