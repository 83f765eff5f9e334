/**
 * The host in a real process: real stdin, signals, timers and exit. This is where "the
 * watchdog fires only when something holds the loop" can be seen: the process either leaves
 * on its own (nothing held it) or the watchdog names what did and exits with the code.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const fixture = fileURLToPath(new URL('./fixtures/host-process.ts', import.meta.url));
const start = (...args: string[]) => spawnProcess(process.execPath, ['--import', 'tsx', fixture, ...args]);

describe('the host in a real process', () => {
  it('leaves on its own after stdin EOF when nothing holds the loop: no watchdog', async () => {
    const p = start();
    try {
      await p.waitForStderr('ready');
      p.child.stdin?.end();
      const exit = await waitForExit(p);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toContain('Shutting down (stdin closed)...');
      expect(p.stderr()).toContain('Shutdown complete');
      expect(p.stderr()).not.toContain('held by');
      expect(p.stdout()).toBe('');
    } finally {
      p.kill();
    }
  });

  it('with a leaked ref handle, the watchdog names it and exits with the computed code', async () => {
    const p = start('leak', 'fail');
    try {
      await p.waitForStderr('ready');
      p.child.stdin?.end();
      const exit = await waitForExit(p);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(p.stderr()).toMatch(
        /QMD Warning: still running 300 ms after teardown; held by: .*Timeout.*Exiting with code 1\./,
      );
    } finally {
      p.kill();
    }
  });

  it('SIGTERM goes through the machine and keeps an earlier exit code', async () => {
    const p = start('exit=4');
    try {
      await p.waitForStderr('ready');
      p.child.kill('SIGTERM');
      const exit = await waitForExit(p);
      expect(exit).toEqual({ code: 4, signal: null });
      expect(p.stderr()).toContain('Shutting down (SIGTERM)...');
    } finally {
      p.kill();
    }
  });
});

/**
 * A watcher that holds the loop (a ref'd interval, as an OS watch or a timer of an engine that
 * did not unref it would) until it is closed: on every way out the host closes it, so the
 * process leaves on its own, and the watchdog never has to name it. The last case is the wrong
 * teardown the others would catch: the same watcher, never given to the lifecycle, holds the
 * process until the watchdog names it.
 */
describe('a watcher that would hold the loop, in a real process', () => {
  const ways: Array<[string, string[], (p: ReturnType<typeof start>) => void, number]> = [
    ['stdin EOF', [], (p) => p.child.stdin?.end(), 0],
    ['SIGTERM', [], (p) => p.child.kill('SIGTERM'), 0],
    ['SIGINT', [], (p) => p.child.kill('SIGINT'), 0],
    ['SIGHUP', [], (p) => p.child.kill('SIGHUP'), 0],
    ['shutdown()', [], (p) => p.child.stdin?.write('shutdown\n'), 0],
    ['a failed step', ['fail'], (p) => p.child.stdin?.end(), 1],
    [
      'an escalation during its write',
      ['writing'],
      (p) => {
        p.child.kill('SIGTERM');
        void p.waitForStderr('watcher.close').then(() => p.child.kill('SIGTERM'));
      },
      0,
    ],
  ];

  it.each(ways)('%s: closed by the teardown, the process leaves on its own', async (_, args, leave, code) => {
    const p = start('watcher', ...args);
    try {
      await p.waitForStderr('ready');
      leave(p);
      const exit = await waitForExit(p);
      expect(exit).toEqual({ code, signal: null });
      expect(p.stderr()).toMatch(/watcher\.close\n(.|\n)*watcher\.closed\n/);
      expect(p.stderr()).not.toContain('held by');
      if (args.includes('writing')) {
        expect(p.stderr()).toContain(
          'QMD Warning: SIGTERM during teardown (SIGTERM): aborting 0 in-flight handler(s) and 1 index write(s)',
        );
        expect(p.stderr()).toContain('watcher.rollback');
      }
    } finally {
      p.kill();
    }
  });

  it('never given to the lifecycle (a wrong teardown), it holds the process until the watchdog names it', async () => {
    const p = start('unowned');
    try {
      await p.waitForStderr('ready');
      p.child.stdin?.end();
      const exit = await waitForExit(p);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(p.stderr()).not.toContain('watcher.close');
      expect(p.stderr()).toMatch(/QMD Warning: still running 300 ms after teardown; held by: .*Timeout/);
    } finally {
      p.kill();
    }
  });
});
