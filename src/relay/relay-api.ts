import type { Duplex, Readable, Writable } from 'node:stream';
import type { InflightGate } from '../lifecycle/gate.js';
import type { Log } from '../log.js';
import type { Timers } from './heal.js';

/**
 * What `createRelay` (`relay.ts`) is given and gives back: the upstream it relays to, its
 * options, and the two teardown steps the relay's lifecycle calls.
 */

/** The server end a relay talks to: the shared server's socket, or a local server as a fallback. */
export interface Upstream {
  stream: Duplex;
  /** `shared` over the Unix socket, `local` when this process serves the client itself. */
  kind: 'shared' | 'local';
  /** Teardown's last step: drop the connection (and, for a local server, close its store). */
  release(): Promise<void>;
  /** The shared server's pid (its greeting), for the lines a relay writes about it. */
  pid?: number;
}

/** What a relay tells `open` after a server stopped answering: the socket not to wait on again. */
export interface OpenHint {
  /** The hung server: its socket (as `open` gave it) is not waited on again; a successor is started. */
  hung?: Upstream;
}

export interface RelayOptions {
  /** The client's requests. */
  stdin: Readable;
  /** The client's replies: the protocol stream, JSON-RPC only. */
  stdout: Writable;
  /** One unit per request forwarded, until its response comes back: what the drain waits for. */
  gate: InflightGate;
  log: Log;
  /** Finds or starts the upstream; `null` if `signal` aborted first (the client left). */
  open(signal: AbortSignal, hint?: OpenHint): Promise<Upstream | null>;
  /**
   * Serving alone, the relay tries this now and then (`heal.ts`'s backoff): a shared server
   * that answers (started if none is), `'soon'` when none answers yet but one is on its way (the
   * wait does not grow then), or `null`. It never serves locally. `hint.hung`: the server this
   * relay last found hung, not waited on again.
   */
  rejoin?(signal: AbortSignal, hint?: OpenHint): Promise<Upstream | 'soon' | null>;
  /** Whether the shared server behind `upstream` still answers (its control socket, bounded). */
  probe?(upstream: Upstream): Promise<boolean>;
  /**
   * `open` failed: nothing can serve this client (the shared server could not start, or the
   * store would not open here either). Every request owed was answered with `reason`; the
   * composition root ends the relay, non-zero.
   */
  onFailed?: (reason: string) => void;
  /**
   * The server was stopped with its clients (`qmd mcp stop --shared --all`) and told this
   * relay so: it will not start another. The composition root ends the relay (exit 0); what
   * the server still owes arrives meanwhile, and whatever it leaves unanswered gets `reason`.
   */
  onStopped?: (reason: string) => void;
  /** The client's `initialize` said who it is (`clientInfo`): for the process's record. */
  onOpening?: (client: { name?: unknown; version?: unknown } | undefined) => void;
  maxLineBytes?: number;
  maxServerLineBytes?: number;
  /** Requests kept waiting for a server (none yet, or its socket backed up); past this they are refused. */
  maxWaiting?: number;
  /** The first wait before a relay serving alone tries to rejoin (`QMD_SHARED_REJOIN_MS`). */
  rejoinMs?: number;
  /** How long a shared server may be silent while replies are owed before it is asked (`QMD_SHARED_SILENCE_MS`). */
  silenceMs?: number;
  timers?: Timers;
}

export interface Relay {
  start(): void;
  /** Teardown step 1: stop reading the client and tell the server the session is ending (half-close). */
  close(): Promise<void>;
  /** Teardown step 2: release the session. */
  release(): Promise<void>;
  /** How many times the upstream was (re)opened: 1 normally, more after a server went away. */
  readonly connections: number;
}

export const MAX_RELAY_LINE_BYTES = 8 * 1024 * 1024;
/**
 * A server line is capped as a client line is (dropped up to its newline, with a warning), but
 * higher: a legitimate reply can be long. `get` returns a whole note (up to 10 MiB are indexed,
 * `src/indexing/scan.ts`), JSON-escaped and with line numbers if asked; `multi_get` up to 8 MiB
 * of notes. Past this, a line is not a reply from a qmd server, and buffering it would let
 * whatever holds the socket grow the relay without bound.
 */
export const MAX_SERVER_LINE_BYTES = 64 * 1024 * 1024;
