/**
 * The run bounds (test/support/run-bounds.ts) on bare machines, looping each way a machine can:
 * on promise rejections alone (microtasks: no timer fires, vitest's test timeout included), on
 * immediates, on 0 ms timers of the real clock, on 0 ms timers of a simulated clock advanced
 * once, and on 1 ms timers of a simulated clock advanced in a loop. Each must fail its run at
 * once, naming the loop; each machine gives up after `SAFETY` transitions (far past every
 * bound), so that with the bounds broken these tests fail instead of hanging. Then: that every
 * test is such a run (test/support/bound-each-test.ts), and that every actor a test or a host
 * makes is watched. ../lifecycle/run-bounds.test.ts has the same through the real hosts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, type AnyStateMachine, assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { FakeClock } from '../support/fake-clock.js';
import { bounded, SAFETY, TEST_BOUNDS, watchActor } from '../support/run-bounds.js';

/** A step that fails and is tried again; `settle` says how its rejection arrives. */
function retrying(settle: (fail: () => void) => void) {
  let attempts = 0;
  const machine = setup({
    actors: {
      step: fromPromise<void>(() =>
        ++attempts > SAFETY
          ? Promise.resolve()
          : new Promise<void>((_, reject) => settle(() => reject(new Error('step failed')))),
      ),
    },
  }).createMachine({
    id: 'retry',
    initial: 'stepping',
    states: {
      stepping: { invoke: { src: 'step', onDone: 'done', onError: 'failed' } },
      failed: { always: 'retrying' },
      retrying: { always: 'stepping' },
      done: { type: 'final' },
    },
  });
  return { machine, attempts: () => attempts };
}

/**
 * A timer of `delayMs`, then nine states in a row without one (a burst, as a teardown's steps
 * are), then the timer again, until `SAFETY` transitions.
 */
function ticking(delayMs: number) {
  const states: Record<string, object> = {
    waiting: { after: { [delayMs]: [{ guard: 'gaveUp', target: 'done' }, { target: 's1' }] } },
    done: { type: 'final' },
  };
  for (let i = 1; i <= 9; i++) states[`s${i}`] = { entry: 'count', always: i === 9 ? 'waiting' : `s${i + 1}` };
  let transitions = 0;
  const machine = setup({
    actions: {
      count: assign(() => {
        transitions += 1;
        return {};
      }),
    },
    guards: { gaveUp: () => transitions > SAFETY },
  }).createMachine({ id: 'tick', initial: 'waiting', context: {}, states: states as never });
  return { machine: machine as unknown as AnyStateMachine, transitions: () => transitions };
}

/** Runs `machine` as one test's run (the per-test bound), until it is done; resolves with what the run threw. */
async function runToFailure(machine: AnyStateMachine, clock?: FakeClock, drive?: () => Promise<void>) {
  return bounded(
    'a looping machine',
    async () => {
      const actor = watchActor(createActor(machine, clock ? { clock } : {}), clock);
      const done = toPromise(actor);
      done.catch(() => {});
      actor.start();
      await drive?.();
      // Never reached within the bound: the machine is done only once it gave up.
      await done;
    },
    TEST_BOUNDS,
  ).then(
    () => new Error('the run ended without passing a bound'),
    (error: unknown) => error as Error,
  );
}

describe('a bare machine that loops fails its run at once, naming the loop', () => {
  it('on promise rejections alone (microtasks): more transitions in one turn of the event loop than the bound', async () => {
    const loop = retrying((fail) => fail());
    const error = await runToFailure(loop.machine);
    expect(error.name).toBe('RunBoundError');
    expect(error.message).toContain(
      `more than ${TEST_BOUNDS.transitionsPerInstant} transitions in one turn of the event loop; ` +
        'the loop: retry stepping → retry failed → retry retrying → retry stepping (on xstate.error.actor.',
    );
    expect(loop.attempts(), 'stopped by the bound, not by the safety').toBeLessThan(SAFETY);
  });

  it('on a simulated clock that never moves: the same loop, at one instant of it', async () => {
    const loop = retrying((fail) => fail());
    const error = await runToFailure(loop.machine, new FakeClock());
    expect(error.message).toContain(`more than ${TEST_BOUNDS.transitionsPerInstant} transitions at t=0 ms`);
    expect(loop.attempts()).toBeLessThan(SAFETY);
  });

  it('on immediates (it yields each time): more transitions in the run than the bound', async () => {
    const loop = retrying((fail) => setImmediate(fail));
    const error = await runToFailure(loop.machine);
    expect(error.message).toContain(
      `the machine never stopped: more than ${TEST_BOUNDS.transitionsPerRun} transitions in one run; ` +
        'the loop: retry stepping → retry failed → retry retrying → retry stepping (on xstate.error.actor.',
    );
    expect(loop.attempts()).toBeLessThan(SAFETY);
  });

  it('on 0 ms timers of the real clock: more transitions in the run than the bound', async () => {
    const loop = ticking(0);
    const error = await runToFailure(loop.machine);
    expect(error.message).toContain(`more than ${TEST_BOUNDS.transitionsPerRun} transitions in one run;`);
    expect(error.message).toContain('tick waiting → tick s1 → tick s2 →');
    expect(error.message).toContain('tick s9 → tick waiting (on xstate.after.0.tick.waiting)');
    expect(loop.transitions()).toBeLessThan(SAFETY);
  });

  it('on 0 ms timers of a simulated clock advanced once: at one instant of it', async () => {
    const loop = ticking(0);
    const clock = new FakeClock();
    const error = await runToFailure(loop.machine, clock, () => clock.advance(1));
    expect(error.message).toContain(`more than ${TEST_BOUNDS.transitionsPerInstant} transitions at t=0 ms`);
    expect(error.message).toContain('tick s9 → tick waiting (on xstate.after.0.tick.waiting)');
    expect(loop.transitions()).toBeLessThan(SAFETY);
  });

  it('on 1 ms timers of a simulated clock advanced in a loop: the run, and then the clock, stop', async () => {
    const loop = ticking(1);
    const clock = new FakeClock();
    let advances = 0;
    const error = await runToFailure(loop.machine, clock, async () => {
      for (; advances < SAFETY; advances++) await clock.advance(1);
    });
    expect(error.message).toContain(`more than ${TEST_BOUNDS.transitionsPerRun} transitions in one run (now t=`);
    expect(error.message).toContain('tick s9 → tick waiting (on xstate.after.1.tick.waiting)');
    expect(loop.transitions()).toBeLessThan(SAFETY);
    // The test's own loop ends too: the clock refuses to advance once its run failed.
    await expect(clock.advance(1)).rejects.toThrow(/run bound passed in a looping machine: the machine never stopped/);
    expect(advances).toBeLessThan(SAFETY);
  });

  it('a run that awaits what the stopped machine will never settle still fails at once', async () => {
    const loop = retrying((fail) => fail());
    const error = await bounded(
      'a run awaiting for ever',
      async () => {
        const actor = watchActor(createActor(loop.machine));
        // Settles only if the machine gives up: stopped with an error, it never does.
        const given = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve(), error: () => {} }));
        actor.start();
        await given;
      },
      TEST_BOUNDS,
    ).then(
      () => new Error('the run ended'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(
      /^run bound passed in a run awaiting for ever: the machine looped without time passing/,
    );
  });
});

describe('every test is a bounded run (test/support/bound-each-test.ts)', () => {
  const loop = retrying((fail) => fail());
  let actor: AnyActorRef | undefined;

  // The run of this test fails it; with the per-test bound broken the machine gives up at
  // `SAFETY`, the test passes, and `fails` reports that.
  it.fails('a test whose machine loops on microtasks fails (this one must)', async () => {
    actor = watchActor(createActor(loop.machine));
    actor.subscribe({ error: () => {} });
    actor.start();
    await toPromise(actor).catch(() => new Promise(() => {}));
  });

  it('…stopped by the bound, which names the loop', () => {
    expect(actor?.getSnapshot().status).toBe('error');
    const error = actor?.getSnapshot().error as Error;
    expect(error.name).toBe('RunBoundError');
    expect(error.message).toContain(
      'in one turn of the event loop; the loop: retry stepping → retry failed → retry retrying → retry stepping',
    );
    expect(loop.attempts()).toBeLessThan(SAFETY);
  });
});

const ROOT = join(import.meta.dirname, '../..');

/** Every .ts file under `dir` (relative to the root), test/.tmp's mutated copies left out. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.startsWith('.tmp'))
    .map((f) => relative(ROOT, join(ROOT, dir, f)));
}

describe('every actor a test runs is watched', () => {
  it('in the tests: each createActor is wrapped in watchActor', () => {
    const unwatched = sources('test').filter((file) => {
      // A child process's script (a fixture) runs outside any test; the bound is not there.
      if (file.includes('/fixtures/') || file === 'test/model/run-bounds.test.ts') return false;
      const text = readFileSync(join(ROOT, file), 'utf8');
      const made = text.match(/\bcreateActor\(/g)?.length ?? 0;
      const watched = text.match(/\bwatchActor\(\s*createActor\(/g)?.length ?? 0;
      return made !== watched;
    });
    expect(unwatched, 'call watchActor(createActor(…), clock) before start()').toEqual([]);
  });

  it('in qmd: the one place that makes an actor tells the channel of it (src/lifecycle/hosted-actors.ts)', () => {
    const making = [...sources('src'), ...sources('machines')].filter((file) =>
      /\bcreateActor\(/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(making, 'a new host of a machine: call announceHostedActor(actor, clock) as machine-host.ts does').toEqual([
      'src/lifecycle/machine-host.ts',
    ]);
    expect(readFileSync(join(ROOT, 'src/lifecycle/machine-host.ts'), 'utf8')).toMatch(
      /announceHostedActor\(actor, clock\)/,
    );
  });
});
