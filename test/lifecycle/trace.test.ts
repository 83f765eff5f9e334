import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, fromPromise, toPromise } from 'xstate';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { createTraceWriter } from '../../src/lifecycle/trace.js';
import { FakeClock, flush } from '../support/fake-clock.js';
import { createHarness, createSharedHarness } from '../support/host-harness.js';
import { recordingLog } from '../support/recording-log.js';
import { watchActor } from '../support/run-bounds.js';

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

  it('every line has pid and inflight; startedAt only on the first; the outcome only on done', async () => {
    const file = traceFile();
    const h = createHarness({ traceFile: file, closeTransport: 'manual' });
    const handler = h.startHandler();
    h.signal('SIGTERM');
    await flush();
    handler.settle();
    h.pending.closeTransport[0]!.resolve();
    await h.lifecycle.done;
    const lines = read(file);
    expect(lines.map((l) => [l.state, l.pid, l.inflight])).toEqual([
      ['connected', process.pid, 0],
      ['closingTransport', process.pid, 1],
      ['draining', process.pid, 0],
      ['disposingStore', process.pid, 0],
      ['done', process.pid, 0],
    ]);
    expect(lines.map((l) => 'startedAt' in l)).toEqual([true, false, false, false, false]);
    for (const line of lines.slice(0, -1)) {
      expect(Object.keys(line).sort()).toEqual(
        ['event', 'inflight', 'ms', 'pid', 'state', ...('startedAt' in line ? ['startedAt'] : [])].sort(),
      );
    }
    expect(lines.at(-1)).toEqual({
      ms: 0,
      event: 'xstate.done.actor.disposeStore',
      state: 'done',
      pid: process.pid,
      inflight: 0,
      reason: 'SIGTERM',
      drain: 'idle',
      failedSteps: [],
      exitCode: 0,
    });
  });

  it('two runs append to one file, each starting with its own startedAt line', async () => {
    const file = traceFile();
    for (const prior of [undefined, 2]) {
      const h = createHarness({ traceFile: file, priorExitCode: prior });
      h.stdin.close();
      await h.lifecycle.done;
    }
    const lines = read(file);
    expect(lines.map((l) => l.state)).toEqual([
      ...['connected', 'closingTransport', 'draining', 'disposingStore', 'done'],
      ...['connected', 'closingTransport', 'draining', 'disposingStore', 'done'],
    ]);
    expect(lines.map((l, i) => ('startedAt' in l ? i : -1)).filter((i) => i >= 0)).toEqual([0, 5]);
    expect([lines[4].exitCode, lines[9].exitCode]).toEqual([0, 2]);
  });

  it.skipIf(!existsSync('/proc/self/fd'))('holds the file open only while the lifecycle runs', async () => {
    const file = traceFile();
    const openOnTrace = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      }).length;
    const h = createHarness({ traceFile: file, closeTransport: 'manual' });
    expect(openOnTrace()).toBe(1);
    h.stdin.end();
    await flush();
    expect(openOnTrace()).toBe(1);
    h.pending.closeTransport[0]!.resolve();
    await h.lifecycle.done;
    expect(openOnTrace()).toBe(0);
  });
});

describe('the trace writer on its own', () => {
  const instant = lifecycleMachine.provide({
    actors: { closeTransport: fromPromise(async () => {}), disposeStore: fromPromise(async () => {}) },
  });

  it('is a plain XState inspector: ms since its start on the given clock, every event type tolerated', async () => {
    const file = traceFile();
    const clock = new FakeClock();
    await clock.advance(1000);
    const log = recordingLog();
    const writer = createTraceWriter(file, clock, log, { startedAt: clock.now() });
    // No host around it: an inspection event the writer could not handle would throw here.
    const actor = watchActor(createActor(instant, { input: {}, clock, inspect: writer.observe }), clock).start();
    await clock.advance(7.456);
    // Transitions that stay in connected: no line of their own.
    actor.send({ type: 'handler.started' });
    actor.send({ type: 'handler.settled' });
    actor.send({ type: 'stdin.end' });
    const output = await toPromise(actor);
    writer.close();
    writer.close();
    expect(log.warnings).toEqual([]);
    const lines = read(file);
    expect(lines.map((l) => [l.ms, l.event, l.state])).toEqual([
      [0, 'xstate.init', 'connected'],
      [7.46, 'stdin.end', 'closingTransport'],
      [7.46, 'xstate.done.actor.closeTransport', 'draining'],
      [7.46, 'xstate.done.actor.closeTransport', 'disposingStore'],
      [7.46, 'xstate.done.actor.disposeStore', 'done'],
    ]);
    expect(lines.at(-1)).toMatchObject({ exitCode: output.exitCode, reason: 'stdin closed', drain: 'idle' });
  });

  it('a failed write is warned about once, and it stops trying', async () => {
    const log = recordingLog();
    const clock = new FakeClock();
    const writer = createTraceWriter('/proc/qmd-no-such-dir/trace.jsonl', clock, log);
    const actor = watchActor(createActor(instant, { input: {}, clock, inspect: writer.observe }), clock).start();
    actor.send({ type: 'stdin.end' });
    await toPromise(actor);
    writer.close();
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatch(/^cannot write the lifecycle trace to \/proc\/qmd-no-such-dir\/trace\.jsonl: /);
  });
});

describe('QMD_SHARED_TRACE: the same line format, each line naming its actor', () => {
  it('the server and each session: states in order, inflight where counted, the outcome on done', async () => {
    const file = traceFile();
    const h = createSharedHarness({ traceFile: file, idleTimeoutMs: 300, closeServer: 'throw' });
    await h.clock.advance(5);
    const id = h.open()!;
    const handler = h.startHandler(id);
    await h.clock.advance(35);
    h.trigger(id, 'connection.ended');
    await flush();
    handler.settle();
    await flush();
    await h.clock.advance(300);
    await h.lifecycle.done;
    const lines = read(file);
    const of = (actor: string) => lines.filter((l) => l.actor === actor);
    expect(of('sharedServer').map((l) => [l.ms, l.state])).toEqual([
      [0, 'connected.idle'],
      [5, 'connected.serving'],
      [40, 'connected.idle'],
      [340, 'closingTransport'],
      [340, 'draining'],
      [340, 'disposingStore'],
      [340, 'done'],
    ]);
    expect(of(id).map((l) => [l.ms, l.event, l.state, l.inflight])).toEqual([
      [5, 'xstate.init', 'serving', 0],
      [40, 'connection.ended', 'closingServer', 1],
      [40, 'xstate.error.actor.closeServer', 'failedStep', 1],
      [40, 'xstate.error.actor.closeServer', 'draining', 1],
      [40, 'handler.settled', 'releasing', 0],
      [40, 'xstate.done.actor.releaseSession', 'done', 0],
    ]);
    expect(lines.map((l) => l.pid)).toEqual(lines.map(() => process.pid));
    expect(lines.filter((l) => 'startedAt' in l).map((l) => l.actor)).toEqual(['sharedServer']);
    // The server counts sessions, not handlers: no inflight on its lines.
    expect(of('sharedServer').some((l) => 'inflight' in l)).toBe(false);
    expect(of(id).at(-1)).toMatchObject({
      reason: null,
      drain: 'idle',
      failedSteps: [{ step: 'closeServer', error: `closeServer:${id} exploded` }],
    });
    expect(of('sharedServer').at(-1)).toMatchObject({
      event: 'xstate.done.actor.disposeStore',
      exitCode: 0,
      reason: 'idle for 300 ms',
      drain: 'idle',
      failedSteps: [],
    });
  });
});
