import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { createHarness } from '../support/lifecycle-harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function traceFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-trace-'));
  dirs.push(dir);
  return join(dir, 'trace.jsonl');
}
const read = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('QMD_LIFECYCLE_TRACE', () => {
  it('writes one line per state entered, the initial state and eventless passes included', async () => {
    const file = traceFile();
    const h = createHarness({ traceFile: file, closeTransport: 'throw', drainTimeoutMs: 1000 });
    const handler = h.startHandler();
    await h.clock.advance(25);
    h.stdin.end();
    await flush();
    await h.clock.advance(40);
    handler.settle();
    await h.lifecycle.done;
    const lines = read(file);
    expect(lines.map((l) => [l.event, l.state])).toEqual([
      ['xstate.init', 'connected'],
      ['stdin.end', 'closingTransport'],
      ['xstate.error.actor.closeTransport', 'failedStep'],
      ['xstate.error.actor.closeTransport', 'draining'],
      ['handler.settled', 'disposingStore'],
      ['xstate.done.actor.disposeStore', 'done'],
    ]);
    expect(lines.map((l) => l.ms)).toEqual([0, 25, 25, 25, 65, 65]);
    expect(lines[0].startedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(lines.at(-1)).toMatchObject({
      exitCode: 1,
      reason: 'stdin closed',
      drain: 'idle',
      failedSteps: [{ step: 'closeTransport', error: 'closeTransport exploded' }],
    });
  });

  it('an unwritable trace file is a warning, never a failure', async () => {
    const h = createHarness({ traceFile: '/proc/qmd-cannot-write-here/trace.jsonl' });
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(output.exitCode).toBe(0);
    expect(h.lines.filter((l) => l.startsWith('QMD Warning: cannot write the lifecycle trace'))).toHaveLength(1);
  });
});
