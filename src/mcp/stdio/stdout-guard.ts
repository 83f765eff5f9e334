import { Writable } from 'node:stream';
import { format } from 'node:util';
import type { Log } from '../../log.js';

/**
 * In `qmd mcp` over stdio, stdout is the protocol: nothing but JSON-RPC may ever reach it.
 * This hands the MCP transport a private stream onto fd 1 and points everything else that
 * would write to `process.stdout` — `console.log` of any dependency, a stray
 * `process.stdout.write` — at stderr instead, so no library can corrupt the stream or
 * interleave with a reply. Returns the protocol stream.
 */
export function claimStdout(log: Log): Writable {
  const stdout = process.stdout;
  const rawWrite = stdout.write.bind(stdout) as (chunk: unknown, cb?: (error?: Error | null) => void) => boolean;
  const protocol = new Writable({
    write(chunk, _encoding, callback) {
      rawWrite(chunk, (error) => callback(error ?? null));
    },
  });
  // A write error is the client leaving: the lifecycle's guard on process.stdout turns it into
  // a trigger; here it must only not crash.
  protocol.on('error', () => {});
  const divert = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const cb = typeof encoding === 'function' ? encoding : callback;
    try {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      log.line(`[stdout diverted] ${text.replace(/\n$/, '')}`);
    } catch {
      // Best effort: never let a diverted write throw into its caller.
    }
    if (typeof cb === 'function') queueMicrotask(() => (cb as () => void)());
    return true;
  }) as typeof stdout.write;
  stdout.write = divert;
  for (const method of ['log', 'info', 'debug'] as const) {
    console[method] = (...args: unknown[]) => log.line(format(...args));
  }
  return protocol;
}
