/**
 * A bounded drain whatever the client does (docs/design.md §2.1), in the spawned binary, plain
 * and `--shared`: the worst cases of `bench/drain.ts`'s table. The client writes the handshake
 * and thousands of queries, ends its stdin right behind them (no waiting for anything), then
 * reads everything or never reads while staying alive. Each process reads its stdin to the end
 * (`Shutting down (stdin closed)`), leaves at its drain deadline through its teardown, and every
 * request is answered (a result, or an error saying it was not run) or counted as unanswered in
 * the line it writes at the end. How long that takes is the benchmark's to say, not a test's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { DRAIN_NOTES, drainScript } from './fixtures/drain.js';
import { cleanPlace, sharedServerPids } from './fixtures/shared.js';

/**
 * What the process said it did not deliver: replies written that the client had not taken when
 * it left (`dropped N replies`), and requests it never heard back about (`N requests … go
 * unanswered`); 0 each when it said nothing.
 */
function undelivered(stderr: string): number {
  const dropped = Number(/dropped (\d+) repl(?:y|ies)/.exec(stderr)?.[1] ?? 0);
  return dropped + Number(/(\d+) requests? (?:it|the client) sent go unanswered/.exec(stderr)?.[1] ?? 0);
}

const ws = tempWorkspace(DRAIN_NOTES);
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  env = qmdEnv(ws.index, { QMD_DRAIN_TIMEOUT_MS: '1000', QMD_SHARED_IDLE_MS: '60000' });
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  expect(added.code, added.stderr).toBe(0);
});
afterAll(() => {
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  cleanPlace(ws.index);
  ws.cleanup();
});

describe.each([
  ['qmd mcp', [] as string[]],
  ['qmd mcp --shared (its relay)', ['--shared']],
])('%s, its stdin ended right behind the requests', (_, args) => {
  it('a client alive that never reads: it reads to the EOF, leaves at its drain deadline, says what it dropped', async () => {
    const p = spawnMcp(env, args, { keepStdout: false });
    try {
      p.child.stdout?.pause();
      p.child.stdin?.write(drainScript(2000, 'flood'));
      p.child.stdin?.end();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      const stderr = p.stderr();
      expect(stderr).toContain('Shutting down (stdin closed)...');
      expect(stderr).toContain('drain deadline of 1000 ms passed');
      expect(stderr).toMatch(/QMD Warning: dropped \d+ repl(y|ies) \(\d+ KiB\) the client did not read/);
      expect(stderr).toMatch(
        /Shutdown complete in [\d.]+ ms: stdin closed: drain deadline passed, all steps ok, exit 0/,
      );
      expect(stderr).not.toMatch(/still running \d+ ms after teardown/);
    } finally {
      p.kill();
    }
  });

  it('a client that reads 20,000 queued requests: every one is answered, or refused with an error, or counted as not delivered', async () => {
    const queries = 20_000;
    const p = spawnMcp(env, args, { keepStdout: false });
    const replies = new Map<number, number>();
    let errors = 0;
    let partial = '';
    p.child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        const message = JSON.parse(line) as { id?: number; error?: { message: string } };
        if (typeof message.id !== 'number' || message.id === 0) continue;
        replies.set(message.id, (replies.get(message.id) ?? 0) + 1);
        if (message.error !== undefined) errors++;
      }
    });
    try {
      p.child.stdin?.write(drainScript(queries, 'flood'));
      p.child.stdin?.end();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      await p.closed;
      const stderr = p.stderr();
      expect(stderr).toContain('Shutting down (stdin closed)...');
      // Never a second reply; most are errors (refused: too many waiting, or shut down first).
      expect([...replies.values()].every((n) => n === 1)).toBe(true);
      expect(errors).toBeGreaterThan(0);
      // Every request accounted for: what it said it had not delivered when its drain ended is an
      // upper bound (the client may still read some of those before the process has gone).
      expect(replies.size).toBeLessThanOrEqual(queries);
      expect(replies.size + undelivered(stderr), stderr.slice(-600)).toBeGreaterThanOrEqual(queries);
    } finally {
      p.kill();
    }
  });
});
