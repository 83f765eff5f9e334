/**
 * The pure rules about triggers (machines/triggers.ts) and exit codes (machines/teardown.ts): the breadcrumb's words, which later
 * trigger escalates, and how `process.exitCode` is read. Expected values are written out
 * from the contract (docs/design.md §2.1, §6), never computed with the functions under test.
 */
import { describe, expect, it } from 'vitest';
import { computeExitCode, normalizeExitCode } from '../../machines/teardown.js';
import { describeTrigger, isEscalation, type TriggerEvent } from '../../machines/triggers.js';

const end: TriggerEvent = { type: 'stdin.end' };
const close: TriggerEvent = { type: 'stdin.close' };
const stdout: TriggerEvent = { type: 'stdout.closed', code: 'EPIPE' };
const term: TriggerEvent = { type: 'signal.received', signal: 'SIGTERM' };
const int: TriggerEvent = { type: 'signal.received', signal: 'SIGINT' };
const hup: TriggerEvent = { type: 'signal.received', signal: 'SIGHUP' };
const parent: TriggerEvent = { type: 'parent.gone' };
const http: TriggerEvent = { type: 'http.closed' };
const transport: TriggerEvent = { type: 'transport.closed' };
const shutdown: TriggerEvent = { type: 'shutdown.requested', reason: 'maintenance' };

describe('describeTrigger: the words of the breadcrumb', () => {
  it.each([
    [end, 'stdin closed'],
    [close, 'stdin closed'],
    [stdout, 'stdout closed'],
    [{ type: 'stdout.closed' } as TriggerEvent, 'stdout closed'],
    [term, 'SIGTERM'],
    [int, 'SIGINT'],
    [hup, 'SIGHUP'],
    [parent, 'parent exited'],
    [http, 'HTTP server stopped'],
    [transport, 'transport closed'],
    [shutdown, 'maintenance'],
    [{ type: 'shutdown.requested' } as TriggerEvent, 'shutdown requested'],
    [{ type: 'shutdown.requested', reason: '' } as TriggerEvent, ''],
  ])('%j → %s', (event, words) => {
    expect(describeTrigger(event)).toBe(words);
  });
});

describe('isEscalation: a later trigger is "hurry up", or the same departure', () => {
  // Rows: the trigger that started teardown; columns: the one that arrives later.
  const Y = true;
  const n = false;
  const next = [end, close, stdout, transport, term, int, parent, http, shutdown] as const;
  const table: Array<[string, TriggerEvent | null, boolean[]]> = [
    //                  end close stdout transport TERM INT parent http shutdown
    ['stdin.end', end, [n, n, n, n, Y, Y, Y, Y, n]],
    ['stdin.close', close, [n, n, n, n, Y, Y, Y, Y, n]],
    ['stdout.closed', stdout, [n, n, n, n, Y, Y, Y, Y, n]],
    ['transport.closed', transport, [n, n, n, n, Y, Y, Y, Y, n]],
    ['SIGTERM', term, [Y, Y, Y, Y, Y, Y, Y, Y, n]],
    ['SIGINT', int, [Y, Y, Y, Y, Y, Y, Y, Y, n]],
    ['parent.gone', parent, [Y, Y, Y, Y, Y, Y, n, Y, n]],
    ['http.closed', http, [Y, Y, Y, Y, Y, Y, Y, n, n]],
    ['shutdown()', shutdown, [Y, Y, Y, Y, Y, Y, Y, Y, n]],
    ['nothing yet', null, [n, n, n, n, n, n, n, n, n]],
  ];
  it.each(table)('after %s', (_, first, expected) => {
    expect(next.map((event) => isEscalation(first, event))).toEqual(expected);
  });
});

describe('normalizeExitCode: process.exitCode may be a string or undefined', () => {
  it.each([
    [0, 0],
    [3, 3],
    [-1, -1],
    ['4', 4],
    [' 5', 5],
    ['7.9', 7],
    ['0', 0],
    ['abc', 0],
    ['', 0],
    [1.5, 0],
    [Number.NaN, 0],
    [undefined, 0],
    [null, 0],
    [true, 0],
    [{}, 0],
  ])('%j → %j', (code, expected) => {
    expect(normalizeExitCode(code)).toBe(expected);
  });
});

describe('computeExitCode', () => {
  const failure = { step: 'disposeStore' as const, error: 'x' };
  it.each([
    [0, [], 0],
    [0, [failure], 1],
    [0, [failure, failure], 1],
    [2, [], 2],
    [2, [failure], 2],
  ])('prior %j with %j failed step(s) → %j', (priorExitCode, failedSteps, expected) => {
    expect(computeExitCode({ priorExitCode, failedSteps })).toBe(expected);
  });
});
