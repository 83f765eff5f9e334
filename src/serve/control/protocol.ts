/**
 * The control protocol: how `qmd status` and `qmd mcp stop` talk to a running server over its
 * own socket (Unix socket 0600 in a 0700 directory, or a Windows named pipe), instead of
 * trusting a PID read from a file. docs/design.md §6 is its contract.
 *
 * One request line, one reply line, both JSON:
 *
 *   → {"qmd":"control","op":"status"}
 *   ← {"qmd":"control","ok":true,"op":"status","kind":"shared","pid":…,"sessions":{…},…}
 *   → {"qmd":"control","op":"stop","index":"/abs/index.sqlite"}
 *   ← {"qmd":"control","ok":true,"op":"stop","pid":…}
 *   ← {"qmd":"control","ok":false,"error":"…"}          (unknown op, another index)
 *
 * On the shared server's socket the control request is the connection's first line; any other
 * first line is the start of an MCP session (a JSON-RPC message never has a `qmd` member). After
 * a status reply the server closes the connection. After a stop reply it starts its normal
 * teardown (`shutdown()`: breadcrumb, drain, exit code) and leaves the connection open until
 * the process exits, so the asker learns the exit from the connection closing: no PID is read,
 * polled or signalled. Only the socket's owner can connect (file modes; the pipe's ACL).
 */

export const CONTROL_TAG = 'control';

export type ControlRequest = { qmd: 'control'; op: 'status' } | { qmd: 'control'; op: 'stop'; index?: string };

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
}

export type ControlReply =
  | ({ qmd: 'control'; ok: true; op: 'status' } & ServerStatus)
  | { qmd: 'control'; ok: true; op: 'stop'; pid: number }
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
  if (message.op === 'stop') {
    if (message.index !== undefined && typeof message.index !== 'string') return { error: 'index must be a string' };
    return { qmd: 'control', op: 'stop', ...(typeof message.index === 'string' && { index: message.index }) };
  }
  return { error: `unknown control op ${JSON.stringify(message.op)} (status, stop)` };
}

export function encode(message: ControlRequest | ControlReply): string {
  return `${JSON.stringify(message)}\n`;
}
