/**
 * The first line a shared server writes on every connection it takes as a session, before any
 * JSON-RPC: who is serving. A relay waits for it (bounded by `QMD_SHARED_CONNECT_MS`) before it
 * trusts the connection: a server that is stopped (SIGSTOP) or a listener that never answers
 * accepts connections all the same (the kernel's backlog does), and only a line from the
 * process itself says it can serve. It is consumed by the relay, never forwarded to a client.
 *
 *   {"qmd":"shared-server","pid":1234,"index":"/home/u/.cache/qmd/index.sqlite","version":"0.1.0","model":null}
 */
export interface Greeting {
  qmd: 'shared-server';
  pid: number;
  /** The index it serves: a relay for another index refuses it. */
  index: string;
  version: string;
  /**
   * The embedding model it was told to use (`--embed-model`, `QMD_EMBED_MODEL`), or null: the
   * index's own. A relay told another refuses it (it would search with a model its client did
   * not ask for). Absent (an older server): as null.
   */
  model?: string | null;
}

/** A greeting is one short line; anything longer before a newline is not one. */
export const MAX_GREETING_BYTES = 4096;

export function greetingLine(fields: Omit<Greeting, 'qmd'>): string {
  const greeting: Greeting = { qmd: 'shared-server', ...fields };
  return `${JSON.stringify(greeting)}\n`;
}

/** The greeting in `line`, or `null` when the line is anything else. */
export function parseGreeting(line: string): Greeting | null {
  try {
    const value = JSON.parse(line) as Partial<Greeting> | null;
    if (
      value !== null &&
      typeof value === 'object' &&
      value.qmd === 'shared-server' &&
      Number.isSafeInteger(value.pid) &&
      typeof value.index === 'string' &&
      typeof value.version === 'string' &&
      (value.model === undefined || value.model === null || typeof value.model === 'string')
    ) {
      return value as Greeting;
    }
  } catch {
    // Not JSON: not a greeting.
  }
  return null;
}
