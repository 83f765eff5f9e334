/**
 * The small adapters that turn one source of facts into events (stdin, stdout, signals),
 * and the stderr writer. Each is driven through a hand-written fake or a real stream.
 */
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ShutdownSignal } from '../../machines/triggers.js';
import { SHUTDOWN_SIGNALS, watchSignals } from '../../src/lifecycle/signals.js';
import { stdinAlreadyGone, watchStdin } from '../../src/lifecycle/stdin.js';
import { guardStdout } from '../../src/lifecycle/stdout.js';
import { createLog, silentLog } from '../../src/log.js';
import { FakeStdin, FakeStdout } from '../support/host-harness.js';

describe('stdin', () => {
  it.each([
    [{ readableEnded: true, destroyed: false }, { type: 'stdin.end' }],
    [{ readableEnded: true, destroyed: true }, { type: 'stdin.end' }],
    [{ readableEnded: false, destroyed: true }, { type: 'stdin.close' }],
    [{ readableEnded: false, destroyed: false }, null],
  ])('a stdin already %j is reported as %j', (state, expected) => {
    expect(stdinAlreadyGone(state)).toEqual(expected);
  });

  it('real streams: ended, destroyed before the end, open', async () => {
    const ended = new PassThrough();
    ended.resume();
    ended.end();
    await new Promise((resolve) => ended.once('end', resolve));
    const destroyed = new PassThrough();
    destroyed.destroy();
    expect([stdinAlreadyGone(ended), stdinAlreadyGone(destroyed), stdinAlreadyGone(new PassThrough())]).toEqual([
      { type: 'stdin.end' },
      { type: 'stdin.close' },
      null,
    ]);
  });

  it('turns end and close into triggers until detached', () => {
    const stdin = new FakeStdin();
    const sent: string[] = [];
    const detach = watchStdin(stdin, (e) => sent.push(e.type));
    stdin.emit('end');
    stdin.emit('close');
    detach();
    stdin.emit('end');
    stdin.emit('close');
    expect(sent).toEqual(['stdin.end', 'stdin.close']);
    expect(stdin.listenerCount('end') + stdin.listenerCount('close')).toBe(0);
  });
});

describe('the stdout guard', () => {
  it('sends stdout.closed once, with the error code, and swallows every later error', () => {
    const stdout = new FakeStdout();
    const sent: unknown[] = [];
    guardStdout(stdout, (e) => sent.push(e));
    stdout.fail('EPIPE');
    stdout.fail('ECONNRESET');
    expect(() => stdout.fail('EPIPE')).not.toThrow();
    expect(sent).toStrictEqual([{ type: 'stdout.closed', code: 'EPIPE' }]);
  });

  it('an error without a code sends no code', () => {
    const stdout = new EventEmitter();
    const sent: unknown[] = [];
    guardStdout(stdout, (e) => sent.push(e));
    stdout.emit('error', new Error('gone'));
    expect(sent).toStrictEqual([{ type: 'stdout.closed' }]);
  });

  it('detaching removes its listener', () => {
    const stdout = new FakeStdout();
    const detach = guardStdout(stdout, () => {});
    expect(stdout.listenerCount('error')).toBe(1);
    detach();
    expect(stdout.listenerCount('error')).toBe(0);
  });
});

describe('signals', () => {
  it('listens for SIGTERM, SIGINT and SIGHUP by default, names the one heard, and detaches', () => {
    expect(SHUTDOWN_SIGNALS).toEqual(['SIGTERM', 'SIGINT', 'SIGHUP']);
    const source = new EventEmitter();
    const heard: ShutdownSignal[] = [];
    const detach = watchSignals(source, (s) => heard.push(s));
    source.emit('SIGHUP');
    source.emit('SIGTERM');
    source.emit('SIGINT');
    expect(heard).toEqual(['SIGHUP', 'SIGTERM', 'SIGINT']);
    detach();
    source.emit('SIGTERM');
    expect(heard).toHaveLength(3);
    expect(source.eventNames()).toEqual([]);
  });

  it('listens only for the signals it is given', () => {
    const source = new EventEmitter();
    watchSignals(source, () => {}, ['SIGINT']);
    expect(source.eventNames()).toEqual(['SIGINT']);
  });
});

/** A stream that records what reaches it. */
function sink() {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      written.push(String(chunk));
      callback();
    },
  });
  return { stream, written };
}

describe('the stderr writer', () => {
  it('writes whole lines, and warnings start with "QMD Warning: "', () => {
    const { stream, written } = sink();
    const log = createLog(stream);
    log.line('Shutting down (stdin closed)...');
    log.warn('teardown step disposeStore failed');
    expect(written).toEqual(['Shutting down (stdin closed)...\n', 'QMD Warning: teardown step disposeStore failed\n']);
  });

  it.each([
    ['ended', { writableEnded: true, destroyed: false }],
    ['destroyed', { writableEnded: false, destroyed: true }],
  ])('does not even try to write to a stream that has %s', (_, state) => {
    const calls: string[] = [];
    const stream = { ...state, on: () => stream, write: (chunk: string) => calls.push(chunk) };
    const log = createLog(stream as unknown as Writable);
    log.line('a line');
    log.warn('a warning');
    expect(calls).toEqual([]);
  });

  it('real streams: nothing reaches one that ended or was destroyed, and nothing throws', () => {
    const ended = sink();
    const log = createLog(ended.stream);
    ended.stream.end();
    log.line('after end');
    const destroyed = sink();
    const other = createLog(destroyed.stream);
    destroyed.stream.destroy();
    other.warn('after destroy');
    expect([ended.written, destroyed.written]).toEqual([[], []]);
  });

  it('a stream whose write throws loses the line, nothing else', () => {
    const stream = new Writable({ write: () => {} });
    stream.write = () => {
      throw new Error('EBADF');
    };
    expect(() => createLog(stream).warn('lost')).not.toThrow();
  });

  it('guards a stream against "error" once, however many logs write to it', () => {
    const { stream } = sink();
    const before = stream.listenerCount('error');
    createLog(stream);
    createLog(stream);
    expect(stream.listenerCount('error')).toBe(before + 1);
    expect(() => stream.emit('error', new Error('EPIPE'))).not.toThrow();
  });

  it('the silent log drops everything', () => {
    expect(() => {
      silentLog.line('x');
      silentLog.warn('y');
    }).not.toThrow();
  });
});
