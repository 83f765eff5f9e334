/** What the adapter needs of a listening `node:http` (or `net`) server; a fake in tests. */
export interface HttpListener {
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

function swallow(): void {}

/**
 * Accept errors a listener survives: libuv keeps listening after EMFILE/ENFILE (it accepts
 * and drops the connection it cannot take), so these are load, not a dead server.
 */
const TRANSIENT: ReadonlySet<string | undefined> = new Set([
  'EMFILE',
  'ENFILE',
  'ENOBUFS',
  'ENOMEM',
  'ECONNABORTED',
  'EAGAIN',
  'EINTR',
]);

/**
 * Turns a listening HTTP server into the `http.closed` trigger: the listener stopped serving
 * without teardown asking it to, by an error that is not transient or a `close` nobody called
 * for (not `qmd mcp stop`: that asks for `shutdown()` on the daemon's control socket). In HTTP
 * mode stdin is not a client, so the triggers are signals, `shutdown()` and this. A server that
 * cannot take connections any more must not linger holding the index. Transient accept errors
 * only go to `onError`. Detach it before closing the listener yourself; after that, errors are
 * swallowed. Returns the detach function.
 */
export function watchHttpListener(
  listener: HttpListener,
  send: (event: { type: 'http.closed' }) => void,
  onError: (error: NodeJS.ErrnoException, fatal: boolean) => void = () => {},
): () => void {
  let sent = false;
  const stop = (): void => {
    if (sent) return;
    sent = true;
    send({ type: 'http.closed' });
  };
  const onListenerError = (error: NodeJS.ErrnoException): void => {
    const fatal = !TRANSIENT.has(error.code);
    onError(error, fatal);
    if (fatal) stop();
  };
  listener.on('error', onListenerError);
  listener.on('close', stop);
  return () => {
    listener.off('error', onListenerError);
    listener.off('close', stop);
    // A late 'error' with no listener would crash the process mid-teardown: swallow it.
    listener.on('error', swallow);
  };
}
