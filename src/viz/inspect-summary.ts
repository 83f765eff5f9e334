/**
 * One readable line per inspection message a qmd process sends, for `qmd lifecycle inspect`'s
 * terminal: the root actor's events and states, and how its invoked steps ended. Child actors'
 * own bookkeeping (`xstate.init`, `xstate.promise.resolve`) is left out.
 */

/** The fields of Stately's inspection messages (`@statelyai/inspect` 0.7.2) this reads. */
export interface InspectionMessage {
  type?: unknown;
  name?: unknown;
  sessionId?: unknown;
  rootId?: unknown;
  parentId?: unknown;
  event?: { type?: unknown; error?: unknown };
  snapshot?: {
    status?: unknown;
    value?: unknown;
    context?: { inflight?: unknown; writes?: unknown };
    output?: { summary?: unknown };
    error?: unknown;
  };
}

export class SessionNames {
  readonly #names = new Map<string, string>();

  name(sessionId: unknown): string {
    return this.#names.get(String(sessionId)) ?? String(sessionId);
  }

  remember(sessionId: unknown, name: unknown): void {
    if (typeof sessionId === 'string' && typeof name === 'string') this.#names.set(sessionId, name);
  }
}

/** The line for one message, or `null` when it is bookkeeping not worth a line. */
export function describeMessage(message: InspectionMessage, names: SessionNames): string | null {
  const isRoot = message.sessionId === message.rootId;
  switch (message.type) {
    case '@xstate.actor': {
      names.remember(message.sessionId, message.name);
      const name = names.name(message.sessionId);
      return isRoot ? `actor ${name} started` : `actor ${name} started by ${names.name(message.parentId)}`;
    }
    case '@xstate.event':
      if (!isRoot) return null;
      return `event ${String(message.event?.type)}${errorSuffix(message.event?.error)}`;
    case '@xstate.snapshot':
      return isRoot ? rootSnapshot(message) : childSnapshot(message, names);
    default:
      return null;
  }
}

function rootSnapshot(message: InspectionMessage): string | null {
  const snapshot = message.snapshot;
  if (!snapshot) return null;
  const value = typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value);
  const writes = snapshot.context?.writes;
  // The watcher's index writes, when one is in flight (docs/design.md §2.1, "The watcher").
  const writing = typeof writes === 'number' && writes > 0 ? `, writes ${writes}` : '';
  const inflight =
    typeof snapshot.context?.inflight === 'number' ? ` (inflight ${snapshot.context.inflight}${writing})` : '';
  const summary = typeof snapshot.output?.summary === 'string' ? `: ${snapshot.output.summary}` : '';
  if (snapshot.status === 'error') return `machine failed${errorSuffix(snapshot.error)}`;
  return `state ${value}${inflight}${summary}`;
}

function childSnapshot(message: InspectionMessage, names: SessionNames): string | null {
  const status = message.snapshot?.status;
  if (status === 'done') return `${names.name(message.sessionId)} done`;
  if (status === 'error') return `${names.name(message.sessionId)} failed${errorSuffix(message.snapshot?.error)}`;
  return null;
}

function errorSuffix(error: unknown): string {
  if (error === undefined || error === null) return '';
  const message = (error as { message?: unknown }).message;
  return `: ${typeof message === 'string' ? message : JSON.stringify(error)}`;
}
