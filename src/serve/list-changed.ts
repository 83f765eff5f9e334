import type { McpServer } from '@modelcontextprotocol/server';
import type { Clock } from '../lifecycle/clock.js';
import type { Log } from '../log.js';
import type { IndexedChange } from '../watch/types.js';

/** At most one `notifications/resources/list_changed` per client per second: a burst of saves is one. */
export const LIST_CHANGED_INTERVAL_MS = 1000;

export interface ListChangedNotifier {
  /** A server that may be connected to a client; forgotten once collected (held weakly). */
  track(server: McpServer): void;
  /** A committed batch: notes that appeared or went are news to every connected client. */
  indexed(change: IndexedChange): void;
  /** No more notifications (teardown): a trailing one still due is dropped, its timer cleared. */
  close(): void;
}

/**
 * Tells every connected client that the list of notes changed when a batch the watcher committed
 * added or removed some (an edit changes no list), so a client that lists `qmd://` resources
 * lists them again (docs/design.md §6). The first change is sent at once; the changes within
 * the next `intervalMs` are one more notification at its end. Servers are held weakly, as the
 * SDK's own catalog holds them, and only connected ones are told; a send that fails (the client
 * left) is dropped: the notification is a hint, never a reason to fail.
 */
export function createListChangedNotifier(options: {
  clock: Clock;
  log: Log;
  intervalMs?: number;
}): ListChangedNotifier {
  const { clock } = options;
  const interval = options.intervalMs ?? LIST_CHANGED_INTERVAL_MS;
  const servers = new Set<WeakRef<McpServer>>();
  let lastSent = Number.NEGATIVE_INFINITY;
  let trailing: unknown;
  let closed = false;

  const send = (): void => {
    trailing = undefined;
    if (closed) return;
    lastSent = clock.now();
    for (const ref of servers) {
      const server = ref.deref();
      if (server === undefined) {
        servers.delete(ref);
        continue;
      }
      if (!server.isConnected()) continue;
      // McpServer.sendResourceListChanged() leaves its promise unhandled; the Server's is awaited here.
      server.server.sendResourceListChanged().catch(() => {});
    }
  };

  return {
    track(server) {
      servers.add(new WeakRef(server));
    },
    indexed(change) {
      if (closed || (change.added.length === 0 && change.removed.length === 0)) return;
      if (trailing !== undefined) return;
      const wait = lastSent + interval - clock.now();
      if (wait <= 0) send();
      // Unref'd: a hint owed to a client never keeps the process alive.
      else trailing = clock.setTimeout(send, wait, { unref: true });
    },
    close() {
      closed = true;
      if (trailing !== undefined) clock.clearTimeout(trailing);
      trailing = undefined;
      servers.clear();
    },
  };
}
