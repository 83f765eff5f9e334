/** What the stdout guard needs of stdout: its `error` event. `process.stdout` is one; so is a test's fake. */
export interface StdoutSink {
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  off(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * A write to stdout after the client closed its read end fails with EPIPE, and an unhandled
 * stream 'error' crashes the process (exit 1, as for any uncaught exception). Here it means the
 * client is gone: a trigger, sent once, never a crash. The listener stays for the life of the
 * process, because a later write can fail the same way during teardown.
 */
export function guardStdout(
  stdout: StdoutSink,
  send: (event: { type: 'stdout.closed'; code?: string }) => void,
): () => void {
  let sent = false;
  const onError = (error: NodeJS.ErrnoException): void => {
    if (sent) return;
    sent = true;
    send(error.code === undefined ? { type: 'stdout.closed' } : { type: 'stdout.closed', code: error.code });
  };
  stdout.on('error', onError);
  return () => stdout.off('error', onError);
}
