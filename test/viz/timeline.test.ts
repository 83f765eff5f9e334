import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderTimeline } from '../../src/viz/timeline.js';
import { parseTrace } from '../../src/viz/trace-parse.js';
import { createHarness, type StepMode } from '../support/host-harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function traceFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-trace-'));
  dirs.push(dir);
  return join(dir, 'lifecycle.jsonl');
}

/** Records one real run into `file`: serving for 100 ms, then the client closes stdin. */
async function record(file: string, steps: { closeTransport: StepMode; disposeStore: StepMode }) {
  const run = createHarness({ traceFile: file, ...steps });
  await run.clock.advance(100);
  run.stdin.end();
  await run.clock.advance(50);
  return run.lifecycle.done;
}

/** The timeline's rows: `at`, `state`, `took` and the note, split on runs of spaces. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^\s+\d+\.\d ms {2}/.test(line))
    .map((line) => line.trim().split(/ {2,}/));
}

describe('renderTimeline', () => {
  it('shows the path taken, with how long each state lasted', async () => {
    const file = traceFile();
    await record(file, { closeTransport: { ms: 5 }, disposeStore: { ms: 7 } });
    const text = renderTimeline(readFileSync(file, 'utf8'));

    expect(text).toMatch(/^Run 1 of 1, pid \d+, started \d{4}-\d\d-\d\dT/);
    expect(text).toContain('Trigger: stdin closed (stdin.end) at 100.0 ms');
    expect(rows(text)).toEqual([
      ['0.0 ms', 'connected', '100.0 ms', 'on xstate.init'],
      ['100.0 ms', 'closingTransport', '5.0 ms', 'on stdin.end'],
      ['105.0 ms', 'draining', '0.0 ms', 'on xstate.done.actor.closeTransport'],
      ['105.0 ms', 'disposingStore', '7.0 ms', 'on xstate.done.actor.closeTransport'],
      ['112.0 ms', 'done', 'on xstate.done.actor.disposeStore: exit 0'],
    ]);
    expect(text).toContain('Drain: idle (every handler settled)');
    expect(text).toContain('Failed steps: none');
    expect(text).toContain('Exit code: 0');
    expect(text).toContain('Teardown took 12.0 ms');
  });

  it('shows a failed step and its error, and the exit code it caused', async () => {
    const file = traceFile();
    await record(file, { closeTransport: { ms: 5 }, disposeStore: { ms: 7, reject: new Error('database is locked') } });
    const text = renderTimeline(readFileSync(file, 'utf8'));

    expect(rows(text).map((r) => r[1])).toEqual([
      'connected',
      'closingTransport',
      'draining',
      'disposingStore',
      'failedStep',
      'done',
    ]);
    expect(rows(text)[4]).toEqual([
      '112.0 ms',
      'failedStep',
      '0.0 ms',
      'on xstate.error.actor.disposeStore: disposeStore failed (database is locked)',
    ]);
    expect(text).toContain('Failed steps: disposeStore (database is locked)');
    expect(text).toContain('Exit code: 1');
  });

  it('shows the last run by default and every run with `all`, and survives a line cut short by a crash', async () => {
    const file = traceFile();
    await record(file, { closeTransport: { ms: 1 }, disposeStore: { ms: 1 } });
    await record(file, { closeTransport: { ms: 2 }, disposeStore: { ms: 2, reject: new Error('boom') } });
    appendFileSync(file, '{"ms":0,"event":"xstate.init","state":"conn');
    const jsonl = readFileSync(file, 'utf8');

    const last = renderTimeline(jsonl);
    expect(last).toMatch(/^Run 2 of 2/);
    expect(last).not.toContain('Run 1 of 2');
    expect(last).toContain('Exit code: 1');
    expect(last).toContain('is cut short (the process died mid-write?); it was skipped.');

    const all = renderTimeline(jsonl, { all: true });
    expect(all.indexOf('Run 1 of 2')).toBeLessThan(all.indexOf('Run 2 of 2'));
    expect(all).toContain('Exit code: 0');
  });

  it('says when a run never finished', () => {
    const jsonl = [
      '{"ms":0,"event":"xstate.init","state":"connected","pid":7,"inflight":0,"startedAt":"2026-01-01T00:00:00.000Z"}',
      '{"ms":40,"event":"signal.received","state":"closingTransport","pid":7,"inflight":1}',
      '{"ms":2040,"event":"xstate.after.stepTimeout.lifecycle.closingTransport","state":"failedStep","pid":7,"inflight":1}',
      '{"ms":2040,"event":"xstate.after.stepTimeout.lifecycle.closingTransport","state":"draining","pid":7,"inflight":1}',
      '',
    ].join('\n');
    const text = renderTimeline(jsonl);
    expect(text).toContain('Trigger: signal.received at 40.0 ms');
    expect(text).toContain('on xstate.after.stepTimeout.lifecycle.closingTransport: closeTransport timed out');
    expect(text).toContain('Not finished: the last state entered was draining (killed, crashed, or still running).');
  });

  it('says so when there is nothing to show', () => {
    expect(renderTimeline('')).toBe('No lifecycle runs in this trace.\n');
  });
});

describe('parseTrace', () => {
  it('groups interleaved processes by pid and marks a cut-short last line', () => {
    const line = (pid: number, ms: number, state: string, event = 'x') => JSON.stringify({ ms, event, state, pid });
    const jsonl = [
      JSON.stringify({ ms: 0, event: 'xstate.init', state: 'connected', pid: 1, startedAt: 'a' }),
      JSON.stringify({ ms: 0, event: 'xstate.init', state: 'connected', pid: 2, startedAt: 'b' }),
      line(2, 5, 'closingTransport'),
      line(1, 9, 'closingTransport'),
      JSON.stringify({ ms: 12, event: 'y', state: 'done', pid: 2, exitCode: 0 }),
      'not json',
      '{"ms":3',
    ].join('\n');
    const trace = parseTrace(jsonl);
    expect(trace.runs.map((r) => [r.pid, r.startedAt, r.entries.map((e) => e.ms), r.complete])).toEqual([
      [1, 'a', [0, 9], false],
      [2, 'b', [0, 5, 12], true],
    ]);
    expect(trace.skipped).toEqual([6, 7]);
    expect(trace.truncatedTail).toBe(true);
  });

  it('a shared server’s trace: one run per actor, each with its own trigger', () => {
    const at = (actor: string, ms: number, state: string, event: string, extra: object = {}) =>
      JSON.stringify({ ms, event, state, pid: 7, actor, ...extra });
    const jsonl = [
      at('sharedServer', 0, 'connected.idle', 'xstate.init', { startedAt: 's' }),
      at('sharedServer', 5, 'connected.serving', 'session.opened'),
      at('session-1', 5, 'serving', 'xstate.init'),
      at('session-1', 40, 'closingServer', 'connection.ended'),
      at('session-1', 42, 'done', 'xstate.done.actor.releaseSession'),
      at('sharedServer', 43, 'connected.idle', 'xstate.done.actor.session-1'),
      at('sharedServer', 343, 'closingTransport', 'xstate.after.idleTimeout.sharedServer.connected.idle'),
      at('sharedServer', 345, 'done', 'xstate.done.actor.disposeStore', { exitCode: 0, reason: 'idle for 300 ms' }),
    ].join('\n');
    expect(parseTrace(jsonl).runs.map((r) => [r.actor, r.entries.length])).toEqual([
      ['sharedServer', 5],
      ['session-1', 3],
    ]);
    const text = renderTimeline(jsonl, { all: true });
    expect(text).toContain('Run 1 of 2, pid 7, sharedServer, started s');
    expect(text).toContain(
      'Trigger: idle for 300 ms (xstate.after.idleTimeout.sharedServer.connected.idle) at 343.0 ms',
    );
    expect(text).toContain('Run 2 of 2, pid 7, session-1');
    expect(text).toContain('Trigger: connection.ended at 40.0 ms');
  });
});
