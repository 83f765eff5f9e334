/**
 * The watchdog, armed after `done` on an unref'd timer: if anything still holds the loop when
 * it fires, it names what and exits with the computed code.
 */
import { describe, expect, it } from 'vitest';
import { armWatchdog, DEFAULT_WATCHDOG_MS, summarizeResources } from '../../src/lifecycle/watchdog.js';
import { FakeClock } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

function arm(activeResources: () => string[], ms = 300) {
  const clock = new FakeClock();
  const log = recordingLog();
  const exits: number[] = [];
  const disarm = armWatchdog({
    clock,
    log,
    ms,
    exitCode: 2,
    activeResources,
    exit: (code) => exits.push(code),
  });
  return { clock, warnings: log.warnings, exits, disarm };
}

describe('the watchdog', () => {
  it('defaults to 1000 ms', () => {
    expect(DEFAULT_WATCHDOG_MS).toBe(1000);
  });

  it('fires once after its delay on an unref timer, names what holds the loop, and exits with the code', async () => {
    const w = arm(() => ['TCPSocketWrap', 'Timeout', 'TCPSocketWrap']);
    expect(w.clock.pending('unref')).toBe(1);
    expect(w.clock.pending('ref')).toBe(0);
    await w.clock.advance(299);
    expect(w.exits).toEqual([]);
    await w.clock.advance(1);
    expect(w.warnings).toEqual([
      'still running 300 ms after teardown; held by: TCPSocketWrap ×2, Timeout. Exiting with code 2.',
    ]);
    expect(w.exits).toEqual([2]);
  });

  it('says "unknown" when the resources cannot be read, and still exits', async () => {
    const w = arm(() => {
      throw new Error('not supported');
    });
    await w.clock.advance(300);
    expect(w.warnings).toEqual(['still running 300 ms after teardown; held by: unknown. Exiting with code 2.']);
    expect(w.exits).toEqual([2]);
  });

  it('disarmed, it never fires', async () => {
    const w = arm(() => []);
    w.disarm();
    expect(w.clock.pending()).toBe(0);
    await w.clock.advance(10_000);
    expect([w.warnings, w.exits]).toEqual([[], []]);
  });
});

describe('summarizeResources', () => {
  it.each([
    [[], 'nothing reported'],
    [['Timeout'], 'Timeout'],
    [['Timeout', 'Timeout', 'TCPSocketWrap'], 'Timeout ×2, TCPSocketWrap'],
    [['FSReqCallback', 'Timeout', 'FSReqCallback', 'FSReqCallback'], 'FSReqCallback ×3, Timeout'],
  ])('%j → %s', (resources, text) => {
    expect(summarizeResources(resources)).toBe(text);
  });
});

describe('the exit policy at done', () => {
  it('with protocol output a client never read: exits at once with the code, no watchdog wait', async () => {
    const { createExitPolicy } = await import('../../src/lifecycle/exit-policy.js');
    const clock = new FakeClock();
    const log = recordingLog();
    const exits: number[] = [];
    let unwritten = 4096;
    const policy = createExitPolicy({
      clock,
      log,
      exitCode: { get: () => undefined, set: () => {} },
      exit: (code) => exits.push(code),
      unwritten: () => unwritten,
    });
    policy.beginTeardown();
    policy.finish({ exitCode: 0, summary: 'stdin closed: drain deadline passed, all steps ok, exit 0' });
    expect(exits).toEqual([]);
    await clock.advance(0);
    expect(exits).toEqual([0]);
    expect(log.warnings).toEqual([]);

    // Everything written: the watchdog as ever, 1 s later, only if something holds the loop.
    unwritten = 0;
    const again = createExitPolicy({
      clock,
      log,
      exitCode: { get: () => undefined, set: () => {} },
      exit: (code) => exits.push(code),
      activeResources: () => ['Timeout'],
      unwritten: () => unwritten,
    });
    again.finish({ exitCode: 1, summary: 'x' });
    await clock.advance(999);
    expect(exits).toEqual([0]);
    await clock.advance(1);
    expect(exits).toEqual([0, 1]);
  });
});
