/**
 * The shared oracle's rules can fail. The mutants of the shared server's and the session's
 * machines (./shared-mutants.ts, `npm run test:mutants`) prove the rules they break; the others
 * watch what a machine mutant does not reach first (what only the host does: process.exit,
 * the keep-alive and the watchdog, when the exit code is set; or a detail a broken machine
 * breaks only after another rule has already failed). Here a real run's observations are
 * tampered with, the way a broken host would leave them, and the oracle must name the guarantee.
 */
import { describe, expect, it } from 'vitest';
import { SERVER_WORLD } from './shared-model.js';
import type { SharedGuarantee } from './shared-oracle.js';
import { act, advance, endSession, open, serverWorld, settleStep, startHandler, type World } from './shared-perform.js';

const broken = (guarantee: SharedGuarantee) => `guarantee "${guarantee}" broken: `;

function push(w: World, call: string): void {
  w.h.calls.push(call);
  w.h.callTimes.push(w.h.clock.now());
}

function remove(w: World, call: string): void {
  const i = w.h.calls.findIndex((c) => c === call || (call.endsWith('…') && c.startsWith(call.slice(0, -1))));
  if (i < 0) throw new Error(`no ${call} to remove`);
  w.h.calls.splice(i, 1);
  w.h.callTimes.splice(i, 1);
}

function replace(w: World, call: string, by: string): void {
  const i = w.h.calls.indexOf(call);
  if (i < 0) throw new Error(`no ${call} to replace`);
  w.h.calls[i] = by;
}

const signal = (w: World, name: 'SIGTERM' | 'SIGINT' = 'SIGTERM') =>
  act(w, { kind: 'signal', signal: name }, () => w.h.signal(name));

/** A session ending on its own: its relay half-closes. */
async function ending(w: World): Promise<string> {
  const id = (await open(w))!;
  await act(w, { kind: 'connection', session: id, type: 'connection.ended' }, () =>
    w.h.trigger(id, 'connection.ended'),
  );
  return id;
}

async function toDone(w: World): Promise<void> {
  await signal(w);
  await settleStep(w, 'closeListener', true);
  await settleStep(w, 'disposeStore', true);
}

describe('the shared oracle names what a broken host does', () => {
  it('a relay refused while the server is up', async () => {
    const w = serverWorld();
    await open(w);
    replace(w, 'open:session-1', 'open:refused');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a relay is accepted until teardown begins'));
  });

  it('a relay accepted once teardown began', async () => {
    const w = serverWorld();
    await signal(w);
    await open(w);
    replace(w, 'open:refused', 'open:session-1');
    expect(() => w.oracle.check(w.h)).toThrow(broken('no new session once teardown began'));
  });

  it('no teardown when the idle bound passes', async () => {
    const w = serverWorld();
    await advance(w, SERVER_WORLD.idleMs);
    remove(w, 'log:Shutting down (…');
    expect(() => w.oracle.check(w.h)).toThrow(broken('the server leaves within its idle bound'));
  });

  it('no teardown after a signal', async () => {
    const w = serverWorld();
    await signal(w);
    remove(w, 'log:Shutting down (SIGTERM)...');
    expect(() => w.oracle.check(w.h)).toThrow(broken('every trigger starts teardown'));
  });

  it('a second breadcrumb', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'log:Shutting down (SIGTERM)...');
    expect(() => w.oracle.check(w.h)).toThrow(broken('teardown runs exactly once'));
  });

  it('the listener left open at teardown start', async () => {
    const w = serverWorld();
    await signal(w);
    remove(w, 'closeListener');
    expect(() => w.oracle.check(w.h)).toThrow(broken('the listener closes when teardown starts'));
  });

  it('the store disposed while the listener is still closing', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'disposeStore');
    expect(() => w.oracle.check(w.h)).toThrow(broken('the listener is closed before the store is disposed'));
  });

  it('a hurry warned with no signal', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'warn:SIGINT during teardown (SIGTERM): hurrying 0 session(s)');
    expect(() => w.oracle.check(w.h)).toThrow(broken('only a signal during teardown hurries the sessions'));
  });

  it('a drain-deadline warning before the deadline', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'warn:drain deadline of 4000 ms passed with 0 session(s) still ending; hurrying them');
    expect(() => w.oracle.check(w.h)).toThrow(broken('no drain-deadline warning before the deadline'));
  });

  it('a session’s server closed twice', async () => {
    const w = serverWorld();
    await ending(w);
    push(w, 'closeServer:session-1');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a session ends once'));
  });

  it('a session ending with no reason', async () => {
    const w = serverWorld();
    await open(w);
    push(w, 'log:session session-1 ending (connection.ended)');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a session ends only for a reason'));
  });

  it('a session that does not end when its relay half-closes', async () => {
    const w = serverWorld();
    await ending(w);
    remove(w, 'log:session session-1 ending (connection.ended)');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a session’s ending starts its teardown'));
  });

  it('a session’s failed step unwarned', async () => {
    const w = serverWorld();
    await ending(w);
    await settleStep(w, 'closeServer:session-1', false);
    remove(w, 'warn:session session-1: teardown step closeServer failed: …');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a session’s failed step is warned about'));
  });

  it('a session’s step warned as failed when it was not', async () => {
    const w = serverWorld();
    await ending(w);
    push(w, 'warn:session session-1: teardown step closeServer failed: nothing; continuing');
    expect(() => w.oracle.check(w.h)).toThrow(broken('only a failed session step is warned about'));
  });

  it('a session’s drain deadline unwarned', async () => {
    const w = serverWorld();
    const id = (await open(w))!;
    await startHandler(w, id);
    await act(w, { kind: 'connection', session: id, type: 'connection.ended' }, () =>
      w.h.trigger(id, 'connection.ended'),
    );
    await settleStep(w, `closeServer:${id}`, true);
    await advance(w, SERVER_WORLD.sessionDrainMs);
    remove(w, 'warn:session session-1: drain deadline …');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a session’s drain deadline is warned about'));
  });

  it('a session’s drain-deadline warning before its deadline', async () => {
    const w = serverWorld();
    await ending(w);
    push(w, 'warn:session session-1: drain deadline of 70000 ms passed with 0 handler(s) in flight');
    expect(() => w.oracle.check(w.h)).toThrow(broken('no session drain-deadline warning before its deadline'));
  });

  it('a failed step of the server unwarned', async () => {
    const w = serverWorld();
    await signal(w);
    await settleStep(w, 'closeListener', false);
    remove(w, 'warn:teardown step closeListener failed: …');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a failed step is warned about'));
  });

  it('a step of the server timing out unwarned', async () => {
    const w = serverWorld();
    await signal(w);
    await advance(w, SERVER_WORLD.stepMs);
    remove(w, 'warn:teardown step closeListener failed: …');
    expect(() => w.oracle.check(w.h)).toThrow(broken('every teardown step is bounded'));
  });

  it('a step of the server warned as failed when it was not', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'warn:teardown step closeListener failed: nothing; continuing');
    expect(() => w.oracle.check(w.h)).toThrow(broken('only a failed step is reported as failed'));
  });

  it('the store left open after the listener failed', async () => {
    const w = serverWorld();
    await signal(w);
    await settleStep(w, 'closeListener', false);
    remove(w, 'disposeStore');
    expect(() => w.oracle.check(w.h)).toThrow(broken('a failed step does not stop the chain'));
  });

  it('another exit code than the rule’s', async () => {
    const w = serverWorld();
    await toDone(w);
    replace(w, 'exitCode=0', 'exitCode=1');
    expect(() => w.oracle.check(w.h)).toThrow(broken('the exit-code rule'));
  });

  it('the exit code set while the store is still being disposed', async () => {
    const w = serverWorld();
    await signal(w);
    push(w, 'exitCode=0');
    expect(() => w.oracle.check(w.h)).toThrow(broken('teardown completes only after the last step'));
  });

  it('no exit code once the store is disposed', async () => {
    const w = serverWorld();
    await toDone(w);
    remove(w, 'exitCode=0');
    expect(() => w.oracle.check(w.h)).toThrow(broken('teardown completes once the last step ends'));
  });

  it('a summary that says something else', async () => {
    const w = serverWorld();
    await toDone(w);
    const line = w.h.calls.find((c) => c.startsWith('log:Shutdown complete in '))!;
    replace(w, line, line.replace('drained', 'drain cut short'));
    expect(() => w.oracle.check(w.h)).toThrow(broken('every exit is explainable'));
  });

  it('shutdown() resolving with something else', async () => {
    const w = serverWorld();
    await toDone(w);
    w.h.output()!.sessions = 7;
    expect(() => w.oracle.check(w.h)).toThrow(broken('shutdown() resolves with what happened'));
  });

  it('an exit mid-teardown', async () => {
    const w = serverWorld();
    await signal(w);
    w.h.exits.push(0);
    expect(() => w.oracle.check(w.h)).toThrow(broken('no exit before teardown completes'));
  });

  it('no exit once the watchdog is due', async () => {
    const w = serverWorld();
    await toDone(w);
    await advance(w, SERVER_WORLD.watchdogMs);
    w.h.exits.pop();
    expect(() => w.oracle.check(w.h)).toThrow(broken('the watchdog exits with the computed code'));
  });

  it('nothing ref’d holding the process mid-teardown', async () => {
    const w = serverWorld();
    await signal(w);
    // The fake clock numbers its timers from 1: clearing them all drops the keep-alive too.
    for (let id = 1; id < 100; id++) w.h.clock.clearTimeout(id);
    expect(() => w.oracle.check(w.h)).toThrow(broken('teardown holds the process until done'));
  });

  it('a ref’d timer left after done', async () => {
    const w = serverWorld();
    await toDone(w);
    w.h.clock.setTimeout(() => {}, 60_000);
    expect(() => w.oracle.check(w.h)).toThrow(broken('no ref’d timer is left after done'));
  });

  it('a timer left beside the watchdog', async () => {
    const w = serverWorld();
    await toDone(w);
    w.h.clock.setTimeout(() => {}, 60_000, { unref: true });
    expect(() => w.oracle.check(w.h)).toThrow(broken('only the watchdog is left after done'));
  });

  it('the store left alone once the last session is done', async () => {
    const w = serverWorld();
    const id = (await open(w))!;
    await signal(w);
    await settleStep(w, 'closeListener', true);
    await endSession(w, id);
    remove(w, 'disposeStore');
    expect(() => w.oracle.check(w.h)).toThrow(broken('the store is disposed once every session is done'));
  });

  it('and passes the same runs untouched', async () => {
    const w = serverWorld();
    const id = (await open(w))!;
    await startHandler(w, id);
    await toDone(w).catch(() => {});
    await advance(w, SERVER_WORLD.sessionStepMs * 2 + SERVER_WORLD.sessionDrainMs + SERVER_WORLD.stepMs);
    await advance(w, SERVER_WORLD.watchdogMs);
    expect(() => w.oracle.check(w.h)).not.toThrow();
    expect(w.h.exits).toEqual([1]);
  });
});
