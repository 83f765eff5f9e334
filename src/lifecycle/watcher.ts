/**
 * The index's watcher as a resource the teardown owns (docs/design.md §2.1 "The watcher", §3):
 * an adapter like stdin's, turning the watcher's writes into machine events, and the one place
 * that stops and closes it. Structural: `src/lifecycle/` imports no product module, and
 * `src/watch/`'s `IndexWatcher` has this shape.
 *
 * - `own(watcher)`: its writes become `watch.write.started` / `watch.write.settled`, always sent
 *   (one per batch of changed notes, not per call), so `draining` waits for a write in flight.
 * - `stopHearing()` as `closeTransport` begins: `close()` is called (no change is heard from
 *   then on, nothing is awaited: a write already begun goes on, and the drain waits for it).
 * - `abortWrites()` on escalation or the drain deadline: the signal given to `close()` fires,
 *   and a write still running rolls back.
 * - `closed()` as `disposeStore` begins, before the store: waits for every close. A watcher
 *   shares the store's model and connection, so the store is never closed under one.
 *
 * A watcher given once teardown has begun (it was still loading) is closed at once.
 */

/** What the teardown needs of a watcher: `src/watch/types.ts`'s `IndexWatcher` fits. */
export interface OwnedWatcher {
  /** Called when a write starts and when it has settled (committed or rolled back); returns the unsubscribe. */
  onWrite(listener: (event: 'started' | 'settled') => void): () => void;
  /** Stops hearing changes; a write in progress completes, or rolls back once `signal` fires. Idempotent. */
  close(signal?: AbortSignal): Promise<void>;
}

export interface WatcherOwner {
  own(watcher: OwnedWatcher): void;
  stopHearing(): void;
  abortWrites(reason?: unknown): void;
  /**
   * Resolves once every watcher has closed, with the first close that failed (an Error), or
   * undefined. Never rejects: the store is closed after it either way. `signal` (the step's
   * bound) rolls back what still runs.
   */
  closed(signal: AbortSignal): Promise<Error | undefined>;
  /** Stops listening to every watcher's writes (the machine is done). */
  detach(): void;
  /** Watchers owned so far. */
  readonly size: number;
}

export function createWatcherOwner(send: (event: { type: 'watch.write.started' | 'watch.write.settled' }) => void) {
  const owned: Array<{ watcher: OwnedWatcher; unsubscribe: () => void; closing?: Promise<unknown> }> = [];
  const rollBack = new AbortController();
  let hearing = true;

  const beginClose = (entry: (typeof owned)[number]): void => {
    // A close that throws at once is a close that failed: `closed()` reports it.
    entry.closing ??= (async () => entry.watcher.close(rollBack.signal))();
    entry.closing.catch(() => {});
  };

  const owner: WatcherOwner = {
    own(watcher) {
      const unsubscribe = watcher.onWrite((event) =>
        send({ type: event === 'started' ? 'watch.write.started' : 'watch.write.settled' }),
      );
      const entry = { watcher, unsubscribe };
      owned.push(entry);
      if (!hearing) beginClose(entry);
    },
    stopHearing() {
      hearing = false;
      for (const entry of owned) beginClose(entry);
    },
    abortWrites(reason = new Error('rolled back: the server is shutting down')) {
      if (!rollBack.signal.aborted) rollBack.abort(reason);
    },
    async closed(signal) {
      owner.stopHearing();
      const onBound = (): void => owner.abortWrites(new Error('rolled back: the teardown step’s bound passed'));
      if (signal.aborted) onBound();
      else signal.addEventListener('abort', onBound, { once: true });
      try {
        const results = await Promise.allSettled(owned.map((entry) => entry.closing));
        const failed = results.find((r) => r.status === 'rejected');
        if (failed === undefined) return undefined;
        const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
        return new Error(`closing the index watcher: ${why}`);
      } finally {
        signal.removeEventListener('abort', onBound);
      }
    },
    detach() {
      for (const entry of owned) entry.unsubscribe();
    },
    get size() {
      return owned.length;
    },
  };
  return owner;
}
