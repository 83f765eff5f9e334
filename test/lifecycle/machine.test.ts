/**
 * The machine on its own, as an application that forgets `machine.provide(...)` would run it.
 *
 * The module is imported inside each test, not at the top: a machine definition XState
 * rejects (an unknown initial state, a target that does not exist) throws when the module
 * loads, and a test file whose imports throw reports no test at all (nor does a failing
 * `beforeAll`, to StrykerJS) — these tests fail instead.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { watchActor } from '../support/run-bounds.js';

const load = () => import('../../machines/lifecycle.js');

describe('the lifecycle machine without a host', () => {
  it('loads, starts connected, and names the default bounds', async () => {
    const lifecycle = await load();
    const actor = watchActor(createActor(lifecycle.lifecycleMachine, { input: {} })).start();
    expect(actor.getSnapshot().value).toBe('connected');
    expect(lifecycle.DEFAULT_DRAIN_TIMEOUT_MS).toBe(5000);
    expect(lifecycle.DEFAULT_STEP_TIMEOUT_MS).toBe(2000);
    actor.stop();
  });

  it('never pretends a teardown step succeeded: each unprovided step fails, and says why', async () => {
    const lifecycle = await load();
    const actor = watchActor(createActor(lifecycle.lifecycleMachine, { input: {} })).start();
    actor.send({ type: 'stdin.end' });
    const output = await toPromise(actor);
    expect(output).toEqual({
      exitCode: 1,
      reason: 'stdin closed',
      failedSteps: [
        { step: 'closeTransport', error: 'closeTransport is provided by the host' },
        { step: 'disposeStore', error: 'disposeStore is provided by the host' },
      ],
      drain: 'idle',
      escalatedBy: null,
      summary:
        'stdin closed: drained, failed: closeTransport (closeTransport is provided by the host), ' +
        'disposeStore (disposeStore is provided by the host), exit 1',
    });
  });
});
