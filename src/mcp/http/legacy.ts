import { randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport as StreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { McpServer } from '@modelcontextprotocol/server';
import type { Log } from '../../log.js';

/*
 * The 2025-era leg of `qmd mcp --http` (the 2026-07-28 protocol is sessionless: `modern.ts`).
 * Its sessions are Streamable HTTP's, named by `Mcp-Session-Id`: `LegacySession`, not the
 * shared server's sessions (`machines/session.ts`, one per relay connection).
 *
 * Decision: 2025 clients keep MCP sessions (stateful Streamable HTTP), one `McpServer` per
 * session, all sharing one store, one model and one lifecycle gate. SDK v2's own default for
 * 2025 traffic is stateless; we route 2025 requests here instead (`isLegacyRequest`).
 *
 * Why not stateless (`sessionIdGenerator: undefined`, a fresh server and transport per
 * request — the SDK refuses to reuse a stateless transport):
 * - Cancellation. A client's `notifications/cancelled` must reach the `McpServer` running the
 *   request to abort its handler's signal; with sessions it does, stateless it lands on a new
 *   server that knows nothing of it, and a cancelled hybrid query keeps the model busy.
 * - The point of the shared server is many clients on one warm model (docs/design.md §1). That
 *   comes from sharing the store, which both designs do; a session costs one McpServer and
 *   transport (heap and build time: docs/design.md §5, "Start-up"), which stateless would
 *   rebuild for every request.
 * - Server-to-client messages (the GET event stream, logging, list-changed) need a session.
 * The costs, handled here: sessions must be reaped (the peer never did — idle ones are
 * closed after `idleMs`, and `maxSessions` evicts the least recently used one not answering a
 * request, a held GET event stream or not), and a restarted server forgets them (the client gets 404 and, per the spec, re-initializes).
 */

/**
 * One 2025-era client over HTTP, by its `Mcp-Session-Id`: its own `McpServer` and transport
 * (the SDK binds one server to one transport), sharing the store, the model and the gate with
 * every other.
 */
export interface LegacySession {
  readonly server: McpServer;
  readonly transport: StreamableHTTPServerTransport;
  /** Set once `initialize` succeeded; until then the session is pending and not routable. */
  readonly id: string | undefined;
  /** HTTP exchanges of this session still open (a POST being answered, the GET event stream). */
  readonly open: number;
  /** Of those, GET event streams: held open by the client, they do not make a session busy. */
  readonly streams: number;
}

export interface LegacyLegOptions {
  createServer(): McpServer;
  /** A session with nothing open for this long is closed (QMD_HTTP_SESSION_IDLE_MS). */
  idleMs: number;
  /**
   * At most this many sessions; a new one evicts the least recently used one with no request
   * in flight, a held GET event stream or not.
   */
  maxSessions: number;
  log: Log;
  now?: () => number;
  /** A session was closed, however (DELETE, idle, evicted, teardown): its memory is garbage now. */
  onSessionClosed?: () => void;
}

export interface LegacyLeg {
  get(id: string): LegacySession | undefined;
  /** A new pending session, connected; it becomes routable when `initialize` succeeds. */
  create(): Promise<LegacySession>;
  /**
   * Makes room for one more session, evicting the least recently used one with no request in
   * flight (its event stream, if it holds one, is closed with it); false if every session is
   * answering a request.
   */
  makeRoom(): Promise<boolean>;
  /** An exchange of `session` began / ended (`stream`: a GET event stream); the idle clock restarts at each. */
  begin(session: LegacySession, stream?: boolean): void;
  end(session: LegacySession, stream?: boolean): void;
  /**
   * Closes sessions with no request for `idleMs`, a held event stream or not (a client that
   * died with its stream open would otherwise hold its session for ever); returns how many.
   * Runs on an unref'd timer too.
   */
  reapIdle(): Promise<number>;
  /** Initialized sessions now. */
  readonly size: number;
  /**
   * Teardown, step 1: no more reaping; every event stream (GET) is closed; a session with
   * nothing in flight is closed now, the others as soon as their last exchange ends, so the
   * replies they are working on are still delivered.
   */
  beginShutdown(): Promise<void>;
  /** Teardown, after the drain: closes whatever is left (aborting handlers, discarding replies). */
  closeAll(): Promise<void>;
}

interface Entry {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  id: string | undefined;
  open: number;
  streams: number;
  lastSeen: number;
  closing: boolean;
}

/** Answering a request (a POST or DELETE exchange open); a held GET event stream alone is not. */
function busy(entry: Entry): boolean {
  return entry.open - entry.streams > 0;
}

export function createLegacyLeg(options: LegacyLegOptions): LegacyLeg {
  const now = options.now ?? (() => performance.now());
  const { log } = options;
  const byId = new Map<string, Entry>();
  /** Pending and initialized, so teardown reaches an `initialize` still in flight. */
  const live = new Set<Entry>();
  let shuttingDown = false;

  const short = (entry: Entry): string => (entry.id ?? 'pending').slice(0, 8);

  const close = async (entry: Entry, why: string): Promise<void> => {
    if (entry.closing) return;
    entry.closing = true;
    try {
      await entry.server.close();
    } catch (error) {
      log.warn(`http: closing session ${short(entry)} failed: ${(error as Error).message}`);
    }
    if (entry.id !== undefined) log.line(`http: session ${short(entry)} closed (${why}); ${byId.size} open`);
  };

  const forget = (entry: Entry): void => {
    live.delete(entry);
    if (entry.id !== undefined && byId.get(entry.id) === entry) byId.delete(entry.id);
  };

  const reapIdle = async (): Promise<number> => {
    const t = now();
    const idle = [...byId.values()].filter((e) => !busy(e) && !e.closing && t - e.lastSeen >= options.idleMs);
    await Promise.all(idle.map((e) => close(e, `idle for ${Math.round(t - e.lastSeen)} ms`)));
    return idle.length;
  };

  // An unref'd sweep: it never keeps the process alive, and it stops at teardown.
  const sweepMs = Math.max(50, Math.min(options.idleMs / 2, 60_000));
  const sweeper = setInterval(() => void reapIdle(), sweepMs);
  sweeper.unref();

  const registry: LegacyLeg = {
    get: (id) => {
      const entry = byId.get(id);
      return entry && !entry.closing ? entry : undefined;
    },
    get size() {
      return byId.size;
    },

    async create() {
      const entry: Entry = {
        server: options.createServer(),
        transport: undefined as unknown as StreamableHTTPServerTransport,
        id: undefined,
        open: 0,
        streams: 0,
        lastSeen: now(),
        closing: false,
      };
      entry.transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          entry.id = id;
          byId.set(id, entry);
          log.line(`http: session ${short(entry)} opened; ${byId.size} open`);
        },
      });
      live.add(entry);
      // Fires however the session ends: DELETE from the client, reaping, teardown.
      entry.server.server.onclose = () => {
        entry.closing = true;
        forget(entry);
        options.onSessionClosed?.();
      };
      await entry.server.connect(entry.transport);
      return entry;
    },

    async makeRoom() {
      if (byId.size < options.maxSessions) return true;
      // A held GET stream is not work: 64 clients that each keep one open must not lock every
      // new client out. Among sessions with no request in flight, the least
      // recently used goes, with its stream; its client gets 404 and re-initializes.
      const idle = [...byId.values()].filter((e) => !busy(e) && !e.closing);
      const oldest = idle.sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (oldest === undefined) return false;
      const held = oldest.streams > 0 ? ', its event stream closed' : '';
      await close(oldest, `evicted: ${options.maxSessions} sessions is the limit${held}`);
      return byId.size < options.maxSessions;
    },

    begin(session, stream = false) {
      const entry = session as Entry;
      entry.open++;
      if (stream) entry.streams++;
      entry.lastSeen = now();
    },

    end(session, stream = false) {
      const entry = session as Entry;
      entry.open = Math.max(0, entry.open - 1);
      if (stream) entry.streams = Math.max(0, entry.streams - 1);
      entry.lastSeen = now();
      if (entry.open > 0) return;
      // An initialize that failed leaves a session nobody can address: drop it at once.
      if (entry.id === undefined) void close(entry, 'initialize failed');
      else if (shuttingDown) void close(entry, 'server shutting down');
    },

    reapIdle,

    async beginShutdown() {
      shuttingDown = true;
      clearInterval(sweeper);
      const closing: Array<Promise<void>> = [];
      for (const entry of live) {
        entry.transport.closeStandaloneSSEStream();
        if (entry.open === 0) closing.push(close(entry, 'server shutting down'));
      }
      await Promise.all(closing);
    },

    async closeAll() {
      shuttingDown = true;
      clearInterval(sweeper);
      await Promise.all([...live].map((e) => close(e, 'server shut down')));
    },
  };
  return registry;
}
