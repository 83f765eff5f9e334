/**
 * The Node flags qmd hands on (src/node-flags.ts): a wrapper's program, input type and
 * preloads never reach the query worker or a server qmd starts; what Node refuses in a worker
 * (V8 and process flags) never reaches the worker. Measured behaviour: docs/design.md §8.4.
 */
import { describe, expect, it } from 'vitest';
import { childExecArgv, workerExecArgv } from '../src/node-flags.js';

const WRAPPER = [
  '--input-type=module',
  '-e',
  'process.argv.splice(1, 0, "qmd"); await import("qmd")',
  '--require',
  './pre.cjs',
  '-r',
  'x',
  '--import=tsx',
  '--loader',
  'l.mjs',
  '--max-old-space-size=4096',
  '--stack-size=2000',
  '--expose-gc',
  '--title=qmd',
  '--inspect-brk=0',
  '--enable-source-maps',
  '--no-warnings',
  '--unhandled-rejections=strict',
  '--trace-uncaught',
];

describe('the query worker’s flags', () => {
  it('only those that change how errors and warnings are reported', () => {
    expect(workerExecArgv(WRAPPER)).toEqual([
      '--enable-source-maps',
      '--no-warnings',
      '--unhandled-rejections=strict',
      '--trace-uncaught',
    ]);
    expect(workerExecArgv([])).toEqual([]);
  });
});

describe('the flags of a server qmd starts', () => {
  it('keeps V8 and reporting flags; drops the wrapper’s program, input type, preloads and debugger, with their values', () => {
    expect(childExecArgv(WRAPPER)).toEqual([
      '--max-old-space-size=4096',
      '--stack-size=2000',
      '--expose-gc',
      '--title=qmd',
      '--enable-source-maps',
      '--no-warnings',
      '--unhandled-rejections=strict',
      '--trace-uncaught',
    ]);
  });

  it('print and eval in every spelling, test and watch modes', () => {
    expect(childExecArgv(['-p', '1+1', '--print=2', '-pe', 'x', '--eval', 'y', '--input-type', 'module'])).toEqual([]);
    expect(childExecArgv(['--test', '--test-reporter=tap', '--watch', '--watch-path', 'src', '--check'])).toEqual([]);
    expect(childExecArgv(['--experimental-loader', 'a.mjs', '--max-semi-space-size=64'])).toEqual([
      '--max-semi-space-size=64',
    ]);
  });
});
