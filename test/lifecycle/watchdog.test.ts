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

describe('leaving at done when only stdio holds the loop (issue 34 item 8)', () => {
  it.each([
    [['PipeWrap', 'PipeWrap'], true],
    [['TTYWrap', 'PipeWrap', 'TTYWrap'], true],
    [['PipeWrap'], true],
    [[], false],
    [['PipeWrap', 'PipeWrap', 'PipeWrap', 'PipeWrap'], false],
    [['PipeWrap', 'Timeout'], false],
    [['TCPSocketWrap'], false],
    [['FSReqCallback', 'PipeWrap'], false],
    [['PipeWrap', 'ProcessWrap'], false],
  ])('onlyStdioHolds(%j) is %s', async (resources, only) => {
    const { onlyStdioHolds } = await import('../../src/lifecycle/exit-policy.js');
    expect(onlyStdioHolds(resources)).toBe(only);
  });

  async function policyAtDone(options: { resources: () => string[]; pending?: () => number }) {
    const { createExitPolicy } = await import('../../src/lifecycle/exit-policy.js');
    const clock = new FakeClock();
    const log = recordingLog();
    const exits: number[] = [];
    const deferred: Array<() => void> = [];
    const policy = createExitPolicy({
      clock,
      log,
      exitCode: { get: () => undefined, set: () => {} },
      exit: (code) => exits.push(code),
      activeResources: options.resources,
      pendingOutput: options.pending ?? (() => 0),
      defer: (fn) => deferred.push(fn),
    });
    policy.beginTeardown();
    policy.finish({ exitCode: 3, summary: 'stdin closed: drained, all steps ok, exit 3' });
    const runDeferred = (): void => {
      for (const fn of deferred.splice(0)) fn();
    };
    return { clock, log, exits, runDeferred };
  }

  it('stdin and stdout alone, nothing to write: exits with the code once the deferred check runs, no warning', async () => {
    const p = await policyAtDone({ resources: () => ['PipeWrap', 'PipeWrap'] });
    // Not inside finish: what `done` set going (a claim removed, a socket closed) runs first.
    expect(p.exits).toEqual([]);
    p.runDeferred();
    expect(p.exits).toEqual([3]);
    // The watchdog is disarmed: nothing more is said or done.
    expect(p.clock.pending()).toBe(0);
    await p.clock.advance(DEFAULT_WATCHDOG_MS);
    expect(p.exits).toEqual([3]);
    expect(p.log.warnings).toEqual([]);
  });

  it('anything else still held when the check runs: no early exit; the watchdog names it a second later', async () => {
    let resources = ['PipeWrap', 'PipeWrap'];
    const p = await policyAtDone({ resources: () => resources });
    // Between finish and the check, something started after done (a file being removed).
    resources = ['PipeWrap', 'PipeWrap', 'FSReqCallback'];
    p.runDeferred();
    expect(p.exits).toEqual([]);
    await p.clock.advance(DEFAULT_WATCHDOG_MS);
    expect(p.exits).toEqual([3]);
    expect(p.log.warnings).toEqual([
      `still running ${DEFAULT_WATCHDOG_MS} ms after teardown; held by: PipeWrap ×2, FSReqCallback. Exiting with code 3.`,
    ]);
  });

  it('stderr or stdout still writing: no early exit, so no line is cut', async () => {
    const p = await policyAtDone({ resources: () => ['PipeWrap'], pending: () => 120 });
    p.runDeferred();
    expect(p.exits).toEqual([]);
  });

  it('resources that cannot be read: no early exit', async () => {
    const p = await policyAtDone({
      resources: () => {
        throw new Error('not supported');
      },
    });
    p.runDeferred();
    expect(p.exits).toEqual([]);
  });
});
