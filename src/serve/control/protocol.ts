/**
 * The control protocol: how `qmd status` and `qmd mcp stop` talk to a running server over its
 * own socket (Unix socket 0600 in a 0700 directory, or a Windows named pipe), instead of
 * trusting a PID read from a file. docs/design.md §6 is its contract.
 *
 * One request line, one reply line, both JSON:
 *
 *   → {"qmd":"control","op":"status"}
 *   ← {"qmd":"control","ok":true,"op":"status","kind":"shared","pid":…,"sessions":{…},…}
 *   → {"qmd":"control","op":"stop","index":"/abs/index.sqlite","all":true}
 *   ← {"qmd":"control","ok":true,"op":"stop","pid":…,"sessions":2}
 *   → {"qmd":"control","op":"retire","index":"/abs/index.sqlite","version":"0.2.0"}
 *   ← {"qmd":"control","ok":true,"op":"retire","pid":…,"sessions":2}
 *   ← {"qmd":"control","ok":false,"error":"…"}          (unknown op, another index, not older)
 *
 * On the shared server's socket the control request is the connection's first line; any other
 * first line is the start of an MCP session (a JSON-RPC message never has a `qmd` member). After
 * a status reply the server closes the connection. After a stop reply it starts its normal
 * teardown (`shutdown()`: breadcrumb, drain, exit code) and leaves the connection open until
 * the process exits, so the asker learns the exit from the connection closing: no PID is read,
 * polled or signalled. `sessions` in a stop reply: the clients connected at that moment (the
 * shared server's; the daemon has none); with `all`, their relays are told to end too instead
 * of starting a new server. `retire` (the shared server only): a relay of a newer qmd asks the
 * server to stop taking sessions and give up its socket and record, so the relay can start a
 * server of its own version; the old one leaves once its last session has ended. A server
 * refuses a retire from a version that is not newer than its own. Only the socket's owner can
 * connect (file modes; the pipe's ACL).
 */

import type { WatchStatus } from '../../mcp/deps.js';

export const CONTROL_TAG = 'control';

export type ControlRequest =
  | { qmd: 'control'; op: 'status' }
  | { qmd: 'control'; op: 'stop'; index?: string; all?: boolean }
  | { qmd: 'control'; op: 'retire'; index?: string; version: string };

export interface SessionCounts {
  /** Sessions running now (opened and not yet done). */
  live: number;
  /** Sessions opened since the server started. */
  opened: number;
  /** Sessions whose teardown is done: counted when the session ends, not when its socket closes. */
  ended: number;
}

/** What a running server says of itself. */
export interface ServerStatus {
  /** `daemon`: `qmd mcp --http --daemon`; `http`: a foreground `qmd mcp --http`; `shared`: `--shared`. */
  kind: 'shared' | 'daemon' | 'http';
  pid: number;
  index: string;
  version: string;
  startedAt: string;
  uptimeMs: number;
  /** The lifecycle machine's state (`connected.idle`, `connected`, `draining`, …). */
  state: string;
  /** The HTTP server's endpoint (daemon or foreground). */
  url?: string;
  /** The shared server's sessions. */
  sessions?: SessionCounts;
  /** The embedding model: its spec, and whether it is loaded (loaded on first use). */
  model?: { name: string | null; loaded: boolean };
  /**
   * A shared server that gave its place up and leaves when its last session ends: why
   * (`replaced by qmd X`, `replaced by another shared server`). It answers on its retiring
   * socket (`mcp-<hash>-<pid>.sock`), no longer on the index's.
   */
  retiring?: string;
  /** How it keeps the index fresh: its watcher's report, or why nothing watches (docs/design.md §6). */
  watch?: WatchStatus;
}

export type ControlReply =
  | ({ qmd: 'control'; ok: true; op: 'status' } & ServerStatus)
  | { qmd: 'control'; ok: true; op: 'stop'; pid: number; sessions?: number }
  | { qmd: 'control'; ok: true; op: 'retire'; pid: number; sessions: number }
  | { qmd: 'control'; ok: false; error: string };

/**
 * What a line is: a control request, `'other'` (not addressed to us: an MCP message, or not
 * JSON), or an error to answer (addressed to us, but malformed).
 */
export function parseControlLine(line: string): ControlRequest | 'other' | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'other';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'other';
  const message = value as Record<string, unknown>;
  if (message.qmd !== CONTROL_TAG) return 'other';
  if (message.op === 'status') return { qmd: 'control', op: 'status' };
  if (message.index !== undefined && typeof message.index !== 'string') return { error: 'index must be a string' };
  const index = typeof message.index === 'string' ? { index: message.index } : {};
  if (message.op === 'stop') {
    if (message.all !== undefined && typeof message.all !== 'boolean') return { error: 'all must be true or false' };
    return { qmd: 'control', op: 'stop', ...index, ...(message.all === true && { all: true }) };
  }
  if (message.op === 'retire') {
    if (typeof message.version !== 'string' || message.version === '') return { error: 'retire needs a version' };
    return { qmd: 'control', op: 'retire', ...index, version: message.version };
  }
  return { error: `unknown control op ${JSON.stringify(message.op)} (status, stop, retire)` };
}

export function encode(message: ControlRequest | ControlReply): string {
  return `${JSON.stringify(message)}\n`;
}
