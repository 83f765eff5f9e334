/**
 * The watchdog end to end: the real binary, with a ref'd interval that nothing ever clears
 * started before it (`NODE_OPTIONS=--import=data:…`, so the product carries no hook for it),
 * the way a forgotten timer or socket does. After `done` the loop cannot drain, so the watchdog — armed only then — names what
 * holds it and exits with the code the machine computed, whatever that code is.
 */
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, spawnMcp } from '../support/qmd.js';
import { type Spawned, waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace();

/** A ref'd interval started before qmd's first module, held for the life of the process. */
const LEAK = { NODE_OPTIONS: '--import=data:text/javascript,setInterval(()=>{},3600000)' };

/** Serving: `initialize` answered, so the lifecycle has started (the leak was there before it). */
async function serving(server: Spawned): Promise<void> {
  await new Client({ name: 'e2e-watchdog', version: '1.0.0' }).connect(new ChildTransport(server.child));
}

describe('a leaked ref’d handle after done', () => {
  it('clean teardown: the watchdog names the handle and exits 0', async () => {
    const server = spawnMcp(qmdEnv(ws.index, { ...LEAK, QMD_EXIT_WATCHDOG_MS: '300' }));
    try {
      await serving(server);
      server.child.stdin?.end();
      const exit = await waitForExit(server);

      expect(exit).toEqual({ code: 0, signal: null });
      const stderr = server.stderr();
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(stderr).toMatch(
        /QMD Warning: still running 300 ms after teardown; held by: .*Timeout.*\. Exiting with code 0\./,
      );
      // Teardown itself was complete before the forced exit: the store is closed.
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
      expect(stderr.indexOf('Shutdown complete')).toBeLessThan(stderr.indexOf('still running'));
    } finally {
      server.kill();
    }
  });

  it('failed teardown step: the watchdog exits with the computed code, 1', async () => {
    const server = spawnMcp(
      qmdEnv(ws.index, {
        ...LEAK,
        QMD_FAILPOINTS: 'teardown.disposeStore=throw',
        QMD_EXIT_WATCHDOG_MS: '300',
      }),
    );
    try {
      await serving(server);
      server.child.kill('SIGTERM');
      const exit = await waitForExit(server);

      expect(exit).toEqual({ code: 1, signal: null });
      const stderr = server.stderr();
      expect(stderr).toContain('Shutting down (SIGTERM)...');
      expect(stderr).toContain(
        'QMD Warning: teardown step disposeStore failed: failpoint teardown.disposeStore: throw',
      );
      expect(stderr).toMatch(
        /QMD Warning: still running 300 ms after teardown; held by: .*Timeout.*\. Exiting with code 1\./,
      );
    } finally {
      server.kill();
    }
  });
});
