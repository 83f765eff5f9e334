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
