import type { SharedLifecycle } from '../../lifecycle/shared-host.js';
import type { WatchStatus } from '../../mcp/deps.js';
import type { ControlHandlers } from './server.js';

export interface SharedControlFacts {
  index: string;
  version: string;
  startedAt: string;
  /** The embedding model's spec now (named, the index's, or the default), or null. */
  model: () => string | null;
  modelLoaded: () => boolean;
  /** Why it gave its place up (`shared-place.ts`), or undefined while it holds it. */
  retiring?: () => string | undefined;
  /** The watching of its index: one watcher for every client (docs/design.md §2.2). */
  watch?: () => WatchStatus;
  lifecycle: SharedLifecycle;
  stop: ControlHandlers['stop'];
  retire: NonNullable<ControlHandlers['retire']>;
}

/**
 * The shared server's answers to `qmd status`, `qmd mcp stop --shared` and a newer relay's `retire`. The session counts
 * come from its machine: a session is live until its teardown is done (socket released and all),
 * and counted as ended then, never when its socket merely closes.
 */
export function sharedControl(facts: SharedControlFacts): ControlHandlers {
  const { lifecycle } = facts;
  const started = performance.now();
  return {
    index: facts.index,
    status: () => {
      const live = lifecycle.sessions();
      const opened = lifecycle.opened();
      const retiring = facts.retiring?.();
      return {
        ...(retiring !== undefined && { retiring }),
        kind: 'shared',
        pid: process.pid,
        index: facts.index,
        version: facts.version,
        startedAt: facts.startedAt,
        uptimeMs: Math.round(performance.now() - started),
        state: lifecycle.state(),
        sessions: { live, opened, ended: opened - live },
        model: { name: facts.model(), loaded: facts.modelLoaded() },
        ...(facts.watch && { watch: facts.watch() }),
      };
    },
    sessions: () => lifecycle.sessions(),
    stop: facts.stop,
    retire: facts.retire,
  };
}
