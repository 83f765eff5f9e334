/**
 * The HTTP listener adapter (src/lifecycle/http.ts): "the HTTP server told to stop" when the
 * listener dies under us — a fatal error or a close nobody asked for — and never for load.
 * In process, with an EventEmitter standing in for the `node:http` server.
 * (Moved here from test/e2e/http.test.ts, so mutation testing sees it.)
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchHttpListener } from '../../src/lifecycle/http.js';

const errorWith = (code?: string) =>
  Object.assign(new Error(`accept ${code ?? 'failed'}`), code === undefined ? {} : { code });

function watch() {
  const listener = new EventEmitter();
  const sent: string[] = [];
  const errors: string[] = [];
  const detach = watchHttpListener(
    listener,
    (event) => sent.push(event.type),
    (error, fatal) => errors.push(`${error.code}:${fatal}`),
  );
  return { listener, sent, errors, detach };
}

describe('the HTTP listener adapter', () => {
  it('sends http.closed on a fatal error or an unasked-for close, once; load is not fatal', () => {
    const { listener, sent, errors, detach } = watch();
    listener.emit('error', errorWith('EMFILE'));
    expect(sent).toEqual([]);
    listener.emit('error', errorWith('EBADF'));
    listener.emit('close');
    expect(sent).toEqual(['http.closed']);
    expect(errors).toEqual(['EMFILE:false', 'EBADF:true']);

    detach();
    // After detaching (teardown closes the listener itself), errors are swallowed, not thrown.
    expect(() => listener.emit('error', new Error('late'))).not.toThrow();
    listener.emit('close');
    expect(sent).toEqual(['http.closed']);
    expect(listener.listenerCount('close')).toBe(0);
    expect(listener.listenerCount('error')).toBe(1);
  });

  it.each(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'ECONNABORTED', 'EAGAIN', 'EINTR'])(
    '%s is load: reported, not fatal, and the server keeps serving',
    (code) => {
      const { listener, sent, errors } = watch();
      listener.emit('error', errorWith(code));
      expect(errors).toEqual([`${code}:false`]);
      expect(sent).toEqual([]);
    },
  );

  it.each([['EADDRINUSE'], ['EACCES'], [undefined], ['']])('%j is fatal: the server stops', (code) => {
    const { listener, sent, errors } = watch();
    listener.emit('error', errorWith(code));
    expect(errors).toEqual([`${code}:true`]);
    expect(sent).toEqual(['http.closed']);
  });

  it('a close alone stops it, once', () => {
    const { listener, sent } = watch();
    listener.emit('close');
    expect(sent).toEqual(['http.closed']);
    listener.emit('close');
    listener.emit('error', errorWith('EBADF'));
    expect(sent).toEqual(['http.closed']);
  });

  it('reporting errors is optional', () => {
    const listener = new EventEmitter();
    const sent: string[] = [];
    watchHttpListener(listener, (event) => sent.push(event.type));
    listener.emit('error', errorWith('EMFILE'));
    listener.emit('error', errorWith('EPIPE'));
    expect(sent).toEqual(['http.closed']);
  });
});
