import type { AnyActorRef } from 'xstate';
import type { FakeClock } from './fake-clock.js';

/** A hosted machine as a fake host makes it: its root actor and the simulated clock it runs on. */
export interface WatchedHost {
  actor: AnyActorRef;
  clock: FakeClock;
}

const watchers = new Set<(host: WatchedHost) => void>();

/**
 * Hears of every fake host made from now until the returned function is called: how
 * test/model/run-bounds.ts bounds one run without the run passing its hosts along (a replay
 * builds its harness deep inside). Watching attaches nothing to the host itself, so a run
 * "unobserved" (no inspector in the host's options) stays so.
 */
export function watchHosts(watch: (host: WatchedHost) => void): () => void {
  watchers.add(watch);
  return () => watchers.delete(watch);
}

/** Called by each fake host as it is made (test/support/host-harness.ts). */
export function announceHost(host: WatchedHost): void {
  for (const watch of watchers) watch(host);
}
