import type { Writable } from 'node:stream';

/**
 * A write to stdout after the client closed its read end fails with EPIPE, and an unhandled
 * stream 'error' crashes the process (measured with SDK 1.32.2: exit 1). Here it means the
 * client is gone: a trigger, sent once, never a crash. The listener stays for the life of the
 * process, because a later write can fail the same way during teardown.
 */
export function guardStdout(
  stdout: Writable,
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
