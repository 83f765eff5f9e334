import type { Duplex, Readable, Writable } from 'node:stream';
import type { InflightGate } from '../lifecycle/gate.js';
import type { Log } from '../log.js';

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
  open(signal: AbortSignal): Promise<Upstream | null>;
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
  maxLineBytes?: number;
  maxServerLineBytes?: number;
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
