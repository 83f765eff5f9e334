/**
 * The driver's run bounds (test/support/run-bounds.ts): a machine that loops without time
 * passing fails its run with a message naming the loop, instead of hanging the test file.
 * Without the bounds each test here never ends: the loops run on microtasks alone, so no timer
 * fires, vitest's own test timeout included. ./run-bounds.test.ts has the loops of every other
 * kind, and the bound every test carries.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { assign, createActor, fromPromise, setup } from 'xstate';
import { FakeClock, flush } from '../support/fake-clock.js';
import { mutatedCopy } from '../support/mutant-copy.js';
import { bounded, describeLoop, RUN_BOUNDS, RunBoundError, watchActor } from '../support/run-bounds.js';
import { FAILED_STEP_LOOPS } from './held-out-mutants.js';

/**
 * A step that fails at once, and a failure that goes back to the step: a loop on rejections
 * alone. It gives up after `SAFETY` failures (far past every bound), so that with the bounds
 * broken this test fails instead of hanging.
 */
const SAFETY = 20_000;
let attempts = 0;
const loopingMachine = setup({
  actors: {
    step: fromPromise<void>(() => (++attempts > SAFETY ? Promise.resolve() : Promise.reject(new Error('step failed')))),
  },
}).createMachine({
  id: 'loop',
  initial: 'stepping',
  context: { failures: 0 },
  states: {
    stepping: { invoke: { src: 'step', onDone: 'done', onError: { target: 'failed' } } },
    failed: {
      entry: assign({ failures: ({ context }) => context.failures + 1 }),
      always: { target: 'retrying' },
    },
    retrying: { always: { target: 'stepping' } },
    done: { type: 'final' },
  },
});

const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, 'test/.tmp', `driver-${process.pid}`);
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe('each run is bounded', () => {
  it('a machine looping on promise rejections alone fails its run, naming the loop', async () => {
    const clock = new FakeClock();
    attempts = 0;
    const run = bounded('the looping machine', async () => {
      const actor = watchActor(createActor(loopingMachine, { clock }), clock);
      // The bound stops it with an error, as a host would hear it (unheard, XState rethrows it).
      actor.subscribe({ error: () => {} });
      actor.start();
      // Never reached without the bound: the loop holds the microtask queue.
      await flush();
      return actor.getSnapshot().context.failures;
    });
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunBoundError);
    expect(attempts, 'stopped at the bound, not by the safety').toBeLessThan(SAFETY);
    const message = (error as Error).message;
    expect(message).toContain('run bound passed in the looping machine');
    expect(message).toContain(`more than ${RUN_BOUNDS.transitionsPerInstant} transitions at t=0 ms`);
    expect(message).toMatch(
      /the loop: loop stepping → loop failed → loop retrying → loop stepping \(on xstate\.error\.actor\.[^)]*\)$/,
    );
  });

  it('a run that yields but never ends fails at the wall-time bound, and its actors are stopped', async () => {
    const clock = new FakeClock();
    let ticks = 0;
    const idle = setup({}).createMachine({ id: 'idle', initial: 'waiting', states: { waiting: {} } });
    let actor!: ReturnType<typeof createActor<typeof idle>>;
    const error = await bounded(
      'a run that never ends',
      async () => {
        actor = watchActor(createActor(idle, { clock }), clock);
        actor.start();
        // Ends only once the bound stops the actor (a real run left behind would loop on).
        while (actor.getSnapshot().status === 'active') {
          ticks++;
          await flush();
        }
      },
      { ...RUN_BOUNDS, wallMs: 200 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunBoundError);
    expect((error as Error).message).toContain('the run took more than 200 ms of real time');
    expect(ticks).toBeGreaterThan(0);
    expect(actor.getSnapshot().status).toBe('stopped');
  });

  it('a run within its bounds returns what it returns', async () => {
    const clock = new FakeClock();
    const quick = setup({}).createMachine({ id: 'quick', initial: 'a', states: { a: {} } });
    expect(
      await bounded('a quick run', async () => {
        watchActor(createActor(quick, { clock }), clock).start();
        return 'ok';
      }),
    ).toBe('ok');
  });

  it('describeLoop names the cycle that ends the list', () => {
    const on = (state: string, event: string) => ({ state, event, eventless: false });
    const then = (state: string, event: string) => ({ state, event, eventless: true });
    // b --x--> c → a → b, cut at any point of the cycle, reads the same.
    const cycle = [on('m c', 'x'), then('m a', 'x'), then('m b', 'x')];
    for (let cut = 0; cut < 3; cut++) {
      const recent = [...cycle, ...cycle, ...cycle].slice(cut, cut + 7);
      expect(describeLoop(recent), `cut at ${cut}`).toBe('m b → m c → m a → m b (on x)');
    }
    // Two events: the loop starts from the alphabetically first source of an evented step.
    const two = [on('m b', 'y'), then('m c', 'y'), on('m a', 'z')];
    expect(describeLoop([...two, ...two])).toBe('m a → m b → m c → m a (on y, z)');
    expect(describeLoop([on('m a', 'e'), on('m b', 'e')])).toBe('m a → m b (no cycle yet)');
    expect(describeLoop([])).toBe('(no transition)');
  });
});

describe('the held-out lifecycle mutant whose failed step goes back to draining', () => {
  const copy = () =>
    mutatedCopy(
      ROOT,
      join(WORK, FAILED_STEP_LOOPS.name),
      FAILED_STEP_LOOPS,
      ['machines', 'src', 'test/support', 'test/model'],
      false,
    );
  let dir: string | undefined;

  it('with a step that rejects at once: the run fails, naming failedStep → draining → disposingStore', async () => {
    dir ??= copy();
    const { createHarness } = (await import(
      pathToFileURL(join(dir, 'test/support/host-harness.ts')).href
    )) as typeof import('../support/host-harness.js');
    const { bounded: copyBounded } = (await import(
      pathToFileURL(join(dir, 'test/support/run-bounds.ts')).href
    )) as typeof import('../support/run-bounds.js');
    const error = await copyBounded('stdin ends, disposeStore throws', async () => {
      const h = createHarness({ disposeStore: 'throw' });
      h.stdin.end();
      await h.lifecycle.done;
    }).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain('looped without time passing');
    expect(message).toContain(
      'the loop: lifecycle disposingStore → lifecycle failedStep → lifecycle draining → lifecycle disposingStore (on xstate.error.actor.disposeStore)',
    );
  });

  it('in the deterministic scenarios, where the same loop runs on timers at one instant: they fail, not hang', async () => {
    dir ??= copy();
    const scenarios = (await import(
      pathToFileURL(join(dir, 'test/model/scenarios.ts')).href
    )) as typeof import('./scenarios.js');
    const failures = await scenarios.runAll([
      { config: { drainTimeoutMs: 0, stepTimeoutMs: 0 }, cmds: ['start', 'stdin.end', { advance: 20_000 }] },
    ]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain('looped without time passing: more than 1000 transitions at t=0 ms');
    expect(failures[0]).toContain(
      'the loop: lifecycle disposingStore → lifecycle failedStep → lifecycle draining → lifecycle disposingStore (on xstate.after.stepTimeout.lifecycle.disposingStore, xstate.after.drainTimeout.lifecycle.draining)',
    );
  });
});
