/**
 * The run bounds (test/support/run-bounds.ts) through the real hosts: an event source that
 * re-triggers itself (it sends again from inside the transition its event caused, as a file
 * watcher would that sees the files its own event made the index write) makes the lifecycle,
 * a session of the shared server, or the lifecycle on the real clock loop. Each run must fail
 * at once, naming the loop, and the host must still reach `done` with its fallback output
 * and a warning that says why. The source gives up after `SAFETY` sends, so that with the
 * bounds broken these tests fail instead of hanging. ../model/run-bounds.test.ts has the bare
 * machines; a new source is tested the same way (docs/design.md §4).
 */
import { describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { createLifecycle } from '../../src/lifecycle/host.js';
import { createHarness, createSharedHarness, DETACHED } from '../support/host-harness.js';
import { type LoopingSource, loopingSource, type Via } from '../support/looping-source.js';
import { recordingLog } from '../support/recording-log.js';
import { bounded, SAFETY, TEST_BOUNDS } from '../support/run-bounds.js';

/** Runs `run` as one test's run; resolves with what it threw (an Error saying so if it threw nothing). */
function failureOf(what: string, run: () => Promise<unknown>): Promise<Error> {
  return bounded(what, run, TEST_BOUNDS).then(
    () => new Error(`${what} ended without passing a bound`),
    (error: unknown) => error as Error,
  );
}

const VIAS: Via[] = ['sync', 'microtask', 'immediate', 'fakeClock'];

describe('the lifecycle host, fed by a source that re-triggers itself', () => {
  it.each(VIAS)('through %s: the run fails at once, naming the loop, and the host still ends', async (via) => {
    let source: LoopingSource | undefined;
    let h: ReturnType<typeof createHarness> | undefined;
    const error = await failureOf(`a source re-triggering through ${via}`, async () => {
      // Observed (an inspector), so the gate tells the machine of each handler from the start.
      h = createHarness({ inspect: [() => {}] });
      const harness = h;
      // Each tool call it starts is a handler in flight, counted by the machine.
      source = loopingSource(harness.lifecycle.actor, () => harness.startHandler(), via, harness.clock);
      if (via === 'fakeClock') await harness.clock.advance(1);
      await Promise.race([harness.lifecycle.done, source.exhausted]);
    });
    expect(error.name).toBe('RunBoundError');
    expect(error.message).toContain(
      `more than ${TEST_BOUNDS.transitionsPerInstant} transitions at t=0 ms of the simulated clock; ` +
        'the loop: lifecycle connected → lifecycle connected (on handler.started)',
    );
    expect(source?.gaveUp, 'stopped by the bound, not by the safety').toBe(false);
    expect(source?.sent).toBeLessThan(SAFETY);
    // Stopped with the bound's error, the machine fails as any machine can: the host warns and ends.
    const output = await h!.lifecycle.done;
    expect(output.exitCode).toBe(1);
    expect(h!.lines).toContainEqual(
      expect.stringMatching(/^QMD Warning: the lifecycle machine failed: the machine looped without time passing/),
    );
  });
});

describe('the lifecycle host, fed by an index watcher whose write makes it write again', () => {
  // The watcher's writes reach the machine as watch.write.started/settled through the host's
  // send (src/lifecycle/watcher.ts), so they count against the bound like any event: a watcher
  // that sees the files its own write touched and writes again, at once, fails its test.
  it.each(['sync', 'microtask', 'fakeClock'] as const)(
    'through %s: the run fails at once, naming the watcher’s loop, and the host still ends',
    async (via) => {
      let source: LoopingSource | undefined;
      let h: ReturnType<typeof createHarness> | undefined;
      const error = await failureOf(`a watcher re-triggering through ${via}`, async () => {
        h = createHarness({ watcher: true });
        const harness = h;
        const watcher = harness.watcher!;
        // Each write settles and begins the next, as one that re-reads what it wrote would.
        source = loopingSource(
          harness.lifecycle.actor,
          () => {
            if (watcher.unsettled > 0) watcher.settleWrite();
            watcher.startWrite();
          },
          via,
          harness.clock,
        );
        if (via === 'fakeClock') await harness.clock.advance(1);
        await Promise.race([harness.lifecycle.done, source.exhausted]);
      });
      expect(error.name).toBe('RunBoundError');
      expect(error.message).toMatch(
        /the loop: lifecycle connected → lifecycle connected \(on watch\.write\.(started|settled)\)/,
      );
      expect(source?.gaveUp, 'stopped by the bound, not by the safety').toBe(false);
      expect(source?.sent).toBeLessThan(SAFETY);
      const output = await h!.lifecycle.done;
      expect(output.exitCode).toBe(1);
      expect(h!.lines).toContainEqual(
        expect.stringMatching(/^QMD Warning: the lifecycle machine failed: the machine looped without time passing/),
      );
      // The machine failed, and its teardown still closed the watcher.
      expect(h!.watcher!.closeCalls).toBe(1);
    },
  );
});

describe('the lifecycle host on the real clock', () => {
  const realHost = () =>
    createLifecycle({ ...DETACHED, log: recordingLog(), activeResources: () => [], inspect: [() => {}] });
  const toolCall = (lifecycle: ReturnType<typeof realHost>) => () =>
    void lifecycle.gate.run(() => new Promise(() => {})).catch(() => {});

  it('a source re-triggering through microtasks: more transitions in one turn of the event loop than the bound', async () => {
    let source: LoopingSource | undefined;
    const error = await failureOf('a source re-triggering through microtasks', async () => {
      const lifecycle = realHost();
      lifecycle.start({ closeTransport: async () => {}, disposeStore: async () => {} });
      source = loopingSource(lifecycle.actor, toolCall(lifecycle), 'microtask');
      await Promise.race([lifecycle.done, source.exhausted]);
    });
    expect(error.message).toContain(
      `more than ${TEST_BOUNDS.transitionsPerInstant} transitions in one turn of the event loop; ` +
        'the loop: lifecycle connected → lifecycle connected (on handler.started)',
    );
    expect(source?.gaveUp).toBe(false);
  });

  it('a source re-triggering through immediates: more transitions in the run than the bound', async () => {
    let source: LoopingSource | undefined;
    const error = await failureOf('a source re-triggering through immediates', async () => {
      const lifecycle = realHost();
      lifecycle.start({ closeTransport: async () => {}, disposeStore: async () => {} });
      source = loopingSource(lifecycle.actor, toolCall(lifecycle), 'immediate');
      await Promise.race([lifecycle.done, source.exhausted]);
    });
    expect(error.message).toContain(
      `the machine never stopped: more than ${TEST_BOUNDS.transitionsPerRun} transitions in one run; ` +
        'the loop: lifecycle connected → lifecycle connected (on handler.started)',
    );
    expect(source?.gaveUp).toBe(false);
  });
});

describe('the shared server host, a session fed by a source that re-triggers itself', () => {
  it.each(['sync', 'immediate'] as const)(
    'through %s: the run fails naming the session’s loop, and the server still ends',
    async (via) => {
      let source: LoopingSource | undefined;
      let h: ReturnType<typeof createSharedHarness> | undefined;
      const error = await failureOf(`a session's source re-triggering through ${via}`, async () => {
        h = createSharedHarness();
        const shared = h;
        const id = shared.open()!;
        const session = (shared.lifecycle.actor.getSnapshot().children as Record<string, AnyActorRef>)[id]!;
        // Each tool call it starts is a handler in flight, counted by the session.
        source = loopingSource(session, () => shared.startHandler(id), via);
        await Promise.race([shared.lifecycle.done, source.exhausted]);
      });
      expect(error.message).toContain(
        `more than ${TEST_BOUNDS.transitionsPerInstant} transitions at t=0 ms of the simulated clock; ` +
          'the loop: session-1 serving → session-1 serving (on handler.started)',
      );
      expect(source?.gaveUp).toBe(false);
      const output = await h!.lifecycle.done;
      expect(output.exitCode).toBe(1);
      expect(h!.lines).toContainEqual(
        expect.stringMatching(/^QMD Warning: the shared server's machine failed: the machine looped without time/),
      );
    },
  );
});
