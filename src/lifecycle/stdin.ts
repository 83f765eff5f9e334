export type StdinTrigger = { type: 'stdin.end' } | { type: 'stdin.close' };

/**
 * What the host needs of stdin: its `end` and `close` events, and whether it ended or was
 * destroyed before anyone listened. `process.stdin` and a socket are one; so is a test's fake.
 */
export interface StdinSource {
  on(event: 'end' | 'close', listener: () => void): unknown;
  off(event: 'end' | 'close', listener: () => void): unknown;
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
}

/**
 * Stdin is how an MCP client says goodbye: EOF is the spec's graceful-shutdown signal, and
 * the SDK's `StdioServerTransport` never listened for it (v1 read `data` and `error` only, so a
 * server on it lived on after its client was gone: docs/design.md §5, "MCP SDK"). This turns
 * `end` and `close` into triggers. Returns the function that removes the listeners.
 */
export function watchStdin(stdin: StdinSource, send: (event: StdinTrigger) => void): () => void {
  const onEnd = (): void => send({ type: 'stdin.end' });
  const onClose = (): void => send({ type: 'stdin.close' });
  stdin.on('end', onEnd);
  stdin.on('close', onClose);
  return () => {
    stdin.off('end', onEnd);
    stdin.off('close', onClose);
  };
}

/**
 * A stdin that ended or was destroyed before anyone listened will never emit again: the
 * trigger it would have sent, or `null` while it is still open. Check it after `watchStdin`.
 */
export function stdinAlreadyGone(stdin: Pick<StdinSource, 'readableEnded' | 'destroyed'>): StdinTrigger | null {
  if (stdin.readableEnded) return { type: 'stdin.end' };
  if (stdin.destroyed) return { type: 'stdin.close' };
  return null;
}
