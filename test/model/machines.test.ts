/**
 * The machines on their own, judged by the contract (./contract.ts) rather than through a host:
 * the pure rules of machines/triggers.ts against the contract's own copy of them, on every pair
 * of triggers; and what a machine does when nobody provides its effects (in Stately, or a
 * host that forgot one): each teardown step fails, naming the effect that is missing, and the
 * chain still runs to the end. The machines are imported inside the tests, so a machine that
 * cannot even be built fails here rather than only breaking every other file's import.
 */

import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor } from 'xstate';
import { FakeClock, flush } from '../support/fake-clock.js';
import { watchActor } from '../support/run-bounds.js';
import { escalates, type Source, wordsFor } from './contract.js';

type Trigger = { type: string; signal?: string; reason?: string };

/** Each trigger the lifecycle hears, as the machine's event and as the contract's source. */
const TRIGGERS: Array<{ event: Trigger; source: Source; signal?: 'SIGTERM' | 'SIGINT' | 'SIGHUP'; reason?: string }> = [
  { event: { type: 'stdin.end' }, source: 'stdin.end' },
  { event: { type: 'stdin.close' }, source: 'stdin.close' },
  { event: { type: 'stdout.closed' }, source: 'stdout' },
  { event: { type: 'transport.closed' }, source: 'transport' },
  { event: { type: 'signal.received', signal: 'SIGTERM' }, source: 'signal', signal: 'SIGTERM' },
  { event: { type: 'signal.received', signal: 'SIGHUP' }, source: 'signal', signal: 'SIGHUP' },
  { event: { type: 'parent.gone' }, source: 'parent' },
  { event: { type: 'http.closed' }, source: 'http' },
  { event: { type: 'shutdown.requested' }, source: 'shutdown' },
  { event: { type: 'shutdown.requested', reason: 'bye' }, source: 'shutdown', reason: 'bye' },
];

describe('the machines’ pure rules agree with the contract', () => {
  it('which later trigger escalates, for every pair, and none before teardown began', async () => {
    const { isEscalation } = await import('../../machines/triggers.js');
    for (const next of TRIGGERS) {
      expect(isEscalation(null, next.event as never), `${next.event.type} before any trigger`).toBe(false);
      for (const first of TRIGGERS) {
        expect(
          isEscalation(first.event as never, next.event as never),
          `${next.event.type} after ${first.event.type}`,
        ).toBe(escalates(first.source, next.source));
      }
    }
  });

  it('what each trigger is called in the breadcrumb', async () => {
    const { describeTrigger } = await import('../../machines/triggers.js');
    for (const t of TRIGGERS) expect(describeTrigger(t.event as never)).toBe(wordsFor(t));
  });

  it('which exit codes count, of those Node accepts in process.exitCode', async () => {
    const { normalizeExitCode } = await import('../../machines/teardown.js');
    const cases: Array<[unknown, number]> = [
      [undefined, 0],
      [null, 0],
      [0, 0],
      [3, 3],
      [-1, -1],
      ['2', 2],
      ['-1', -1],
      [' 7 ', 7],
    ];
    for (const [code, expected] of cases) expect(normalizeExitCode(code), String(code)).toBe(expected);
  });
});

/** Runs a bare machine until it is done, on a fake clock that never needs to move. */
async function runBare(machine: never, input: object, trigger: object) {
  const clock = new FakeClock();
  const actor = watchActor(
    createActor(machine as never, { input, clock } as never) as unknown as AnyActorRef,
    clock,
  ) as unknown as {
    start(): void;
    send(e: object): void;
    getSnapshot(): { status: string; output?: { failedSteps: Array<{ step: string; error: string }> } };
  };
  actor.start();
  actor.send(trigger);
  for (let i = 0; i < 10 && actor.getSnapshot().status === 'active'; i++) await flush();
  return actor.getSnapshot();
}

describe('a machine whose effects nobody provided', () => {
  it('the lifecycle: each step fails naming what the host must provide, and teardown ends', async () => {
    const { lifecycleMachine } = await import('../../machines/lifecycle.js');
    const snapshot = await runBare(lifecycleMachine as never, {}, { type: 'stdin.end' });
    expect(snapshot.status).toBe('done');
    expect(snapshot.output!.failedSteps).toEqual([
      { step: 'closeTransport', error: 'closeTransport is provided by the host' },
      { step: 'disposeStore', error: 'disposeStore is provided by the host' },
    ]);
  });

  it('the shared server: likewise for its own steps', async () => {
    const { sharedServerMachine } = await import('../../machines/shared-server.js');
    const snapshot = await runBare(sharedServerMachine as never, {}, { type: 'signal.received', signal: 'SIGTERM' });
    expect(snapshot.status).toBe('done');
    expect(snapshot.output!.failedSteps).toEqual([
      { step: 'closeListener', error: 'closeListener is provided by the host' },
      { step: 'disposeStore', error: 'disposeStore is provided by the host' },
    ]);
  });

  it('a session: likewise for its steps', async () => {
    const { sessionMachine } = await import('../../machines/session.js');
    const snapshot = await runBare(sessionMachine as never, { id: 'session-1' }, { type: 'connection.ended' });
    expect(snapshot.status).toBe('done');
    expect(snapshot.output!.failedSteps).toEqual([
      { step: 'closeServer', error: 'closeServer is provided by the host' },
      { step: 'releaseSession', error: 'releaseSession is provided by the host' },
    ]);
  });
});
