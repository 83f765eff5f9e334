/**
 * The process's first SIGINT listener (src/sigint.ts): silent while a command's own listener
 * claims SIGINT, and otherwise one line and exit 130. A fake `process` source and exit.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { claimSigint, EARLY_SIGINT_LINE, installFirstSigint, resetSigintForTests } from '../src/sigint.js';

function fakeProcess() {
  const source = new EventEmitter();
  const written: string[] = [];
  const exits: number[] = [];
  installFirstSigint({ source, write: (t) => written.push(t), exit: (c) => exits.push(c) });
  return { source, written, exits };
}

afterEach(() => resetSigintForTests());

describe('the first SIGINT listener', () => {
  it('with nothing else listening: its line and exit 130', () => {
    const p = fakeProcess();
    p.source.emit('SIGINT');
    expect(p.written).toEqual([`${EARLY_SIGINT_LINE}\n`]);
    expect(p.exits).toEqual([130]);
  });

  it('silent while a claim holds; answers again once every claim is released', () => {
    const p = fakeProcess();
    const first = claimSigint();
    const second = claimSigint();
    p.source.emit('SIGINT');
    first();
    first(); // a release counts once
    p.source.emit('SIGINT');
    expect(p.exits).toEqual([]);
    second();
    p.source.emit('SIGINT');
    expect(p.exits).toEqual([130]);
  });

  it('is installed once: a second install adds no listener', () => {
    const p = fakeProcess();
    installFirstSigint({ source: p.source });
    expect(p.source.listenerCount('SIGINT')).toBe(1);
  });

  it('a stderr that throws does not keep it from exiting', () => {
    const source = new EventEmitter();
    const exits: number[] = [];
    installFirstSigint({
      source,
      write: () => {
        throw new Error('EPIPE');
      },
      exit: (c) => exits.push(c),
    });
    source.emit('SIGINT');
    expect(exits).toEqual([130]);
  });
});
