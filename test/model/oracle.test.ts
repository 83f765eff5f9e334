/**
 * The oracle's rules about the host can fail. Machine mutants (./mutants.ts,
 * `npm run test:mutants`) prove the rules about the machine; these rules watch what only the
 * host does (process.exit, the keep-alive and watchdog timers, when the exit code is set), so
 * no mutant of `machines/` reaches them first. Here a real run's observations are tampered
 * with, the way a broken host would leave them, and the oracle must name the guarantee.
 */
import { describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import type { Harness } from '../support/host-harness.js';
import { perform, replayHarness, TIMING, WATCHDOG_MS } from './model.js';
import { Oracle } from './oracle.js';

const raw = (type: string) => ({ type }) as unknown as LifecycleEvent;
const TO_DONE = [{ type: 'stdin.end' }, raw('xstate.done.actor.closeTransport'), raw('xstate.done.actor.disposeStore')];

async function run(events: LifecycleEvent[]): Promise<{ h: Harness; oracle: Oracle }> {
  const h = replayHarness();
  const oracle = new Oracle(TIMING);
  for (const event of events) {
    await perform(h, oracle, event);
    oracle.check(h);
  }
  return { h, oracle };
}

const broken = (guarantee: string) => `guarantee "${guarantee}" broken: `;

describe('the oracle names what a broken host does', () => {
  it('an exit mid-teardown', async () => {
    const { h, oracle } = await run([{ type: 'stdin.end' }]);
    h.exits.push(0);
    expect(() => oracle.check(h)).toThrow(broken('no exit before teardown completes'));
  });

  it('an exit with another code than the computed one', async () => {
    const { h, oracle } = await run(TO_DONE as LifecycleEvent[]);
    h.exits.push(7);
    expect(() => oracle.check(h)).toThrow(broken('the watchdog exits with the computed code'));
  });

  it('no exit once the watchdog is due', async () => {
    const { h, oracle } = await run(TO_DONE as LifecycleEvent[]);
    oracle.feed({ kind: 'advance', ms: WATCHDOG_MS });
    await h.clock.advance(WATCHDOG_MS);
    h.exits.pop(); // as if the watchdog had never fired
    expect(() => oracle.check(h)).toThrow(broken('the watchdog exits with the computed code'));
  });

  it('nothing ref’d holding the process mid-teardown', async () => {
    const { h, oracle } = await run([{ type: 'stdin.end' }]);
    // The fake clock numbers its timers from 1: clearing them all drops the keep-alive too.
    for (let id = 1; id < 100; id++) h.clock.clearTimeout(id);
    expect(() => oracle.check(h)).toThrow(broken('teardown holds the process until done'));
  });

  it('a ref’d timer while serving', async () => {
    const { h, oracle } = await run([{ type: 'handler.started' }]);
    h.clock.setTimeout(() => {}, 60_000);
    expect(() => oracle.check(h)).toThrow(broken('nothing holds the process outside teardown'));
  });

  it('a timer left beside the watchdog', async () => {
    const { h, oracle } = await run(TO_DONE as LifecycleEvent[]);
    h.clock.setTimeout(() => {}, 60_000, { unref: true });
    expect(() => oracle.check(h)).toThrow(broken('only the watchdog is left after done'));
  });

  it('the exit code set while the store is still being disposed', async () => {
    const { h, oracle } = await run(TO_DONE.slice(0, 2) as LifecycleEvent[]);
    h.calls.push('exitCode=0');
    h.callTimes.push(h.clock.now());
    expect(() => oracle.check(h)).toThrow(broken('teardown completes only after the last step'));
  });

  it('a breadcrumb with no trigger', async () => {
    const { h, oracle } = await run([]);
    h.calls.push('log:Shutting down (stdin closed)...');
    h.callTimes.push(0);
    expect(() => oracle.check(h)).toThrow(broken('teardown starts only after a trigger'));
  });

  // The watcher's rules watch what only the host does with it (src/lifecycle/watcher.ts).
  it('a watcher not closed as teardown starts', async () => {
    const { h, oracle } = await run([]);
    h.watcher!.close = async () => {}; // a host that forgot it: close() never reaches the watcher
    await perform(h, oracle, { type: 'stdin.end' });
    expect(() => oracle.check(h)).toThrow(broken('the watcher stops hearing changes when teardown starts'));
  });

  it('a watcher closed with no trigger', async () => {
    const { h, oracle } = await run([]);
    void h.watcher!.close();
    expect(() => oracle.check(h)).toThrow(broken('the watcher stops hearing changes when teardown starts'));
  });

  it('the store disposed while the watcher was still closing', async () => {
    const { h, oracle } = await run(TO_DONE.slice(0, 2) as LifecycleEvent[]);
    const closed = h.calls.indexOf('watcher.closed');
    h.calls.splice(closed, 1);
    h.callTimes.splice(closed, 1);
    expect(() => oracle.check(h)).toThrow(broken('the watcher is closed before the store is disposed'));
  });

  it('a write rolled back with no escalation or deadline', async () => {
    const { h, oracle } = await run([{ type: 'watch.write.started' }, { type: 'stdin.end' }]);
    const controller = new AbortController();
    controller.abort(new Error('rolled back by a host that hurried'));
    h.watcher!.closeSignal = controller.signal;
    expect(() => oracle.check(h)).toThrow(broken('only an escalation or the drain deadline rolls back a write'));
  });

  it('the store disposed under a write that had not settled', async () => {
    const { h, oracle } = await run([
      { type: 'watch.write.started' },
      { type: 'stdin.end' },
      raw('xstate.done.actor.closeTransport'),
    ]);
    // A host that went on to the store without waiting for the write.
    h.calls.push('watcher.closed', 'disposeStore');
    h.callTimes.push(h.clock.now(), h.clock.now());
    h.stepLog.push({ name: 'disposeStore', at: h.clock.now(), inflight: 0, drain: 'idle' });
    expect(() => oracle.check(h)).toThrow(broken('a write is in flight until it settles'));
  });

  it('and passes the same runs untouched', async () => {
    const { h, oracle } = await run(TO_DONE as LifecycleEvent[]);
    oracle.feed({ kind: 'advance', ms: WATCHDOG_MS });
    await h.clock.advance(WATCHDOG_MS);
    expect(() => oracle.check(h)).not.toThrow();
    expect(h.exits).toEqual([0]);
  });
});
