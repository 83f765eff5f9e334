import type { Writable } from 'node:stream';

/**
 * The one writer for everything that is not the protocol. In `qmd mcp` stdout carries
 * JSON-RPC only, so logs, warnings and breadcrumbs go here. It cannot throw: a closed,
 * destroyed or throwing stderr loses the line and nothing else.
 *
 * A neutral leaf: the store, the server, the LLM wrapper and the lifecycle all write through
 * it, so it imports nothing of ours (the import rules in `.dependency-cruiser.cjs`).
 */
export interface Log {
  /** A plain line, e.g. the breadcrumb `Shutting down (stdin closed)...`. */
  line(text: string): void;
  /** A line that starts `QMD Warning: `. */
  warn(text: string): void;
}

const guarded = new WeakSet<Writable>();

function swallow(): void {}

export function createLog(stream: Writable = process.stderr): Log {
  if (!guarded.has(stream)) {
    guarded.add(stream);
    try {
      // An EPIPE on stderr arrives as an 'error' event; unhandled, it would crash the process.
      stream.on('error', swallow);
    } catch {
      // A stream that cannot even take a listener is as good as closed.
    }
  }
  const write = (text: string): void => {
    try {
      if (stream.destroyed || stream.writableEnded) return;
      stream.write(`${text}\n`);
    } catch {
      // Best effort by design.
    }
  };
  return {
    line: write,
    warn: (text) => write(`QMD Warning: ${text}`),
  };
}

/** A log that drops everything, for code paths that must stay silent. */
export const silentLog: Log = { line: swallow, warn: swallow };
