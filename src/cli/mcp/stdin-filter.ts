import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';

/**
 * The SDK's `StdioServerTransport` (1.32.2) buffers at most 10 MiB of an unfinished line;
 * past that it throws inside its data handler and **closes itself**, leaving a deaf server
 * with a paused stdin (measured by reading `shared/stdio.js` and `server/stdio.js`). An
 * oversized request must instead be refused and the server must keep serving, so this sits
 * between stdin and the transport: a line longer than `maxLineBytes` is dropped up to its
 * newline and reported through `onOversized`; everything else passes through untouched.
 */
export function createStdinFilter(
  stdin: Readable,
  options: { maxLineBytes: number; onOversized: (bytes: number) => void },
): { stream: Transform; detach(): void } {
  // The line being read: held back until its newline, so the transport only ever sees whole
  // lines (passing a prefix of a line that turns out too long would poison the next one).
  let pending: Buffer[] = [];
  let lineBytes = 0;
  let discarding = false;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const out: Buffer[] = [];
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        lineBytes += piece.length;
        if (!discarding && lineBytes > options.maxLineBytes) {
          discarding = true;
          pending = [];
        }
        if (!discarding) pending.push(piece);
        if (newline !== -1) {
          if (discarding) options.onOversized(lineBytes);
          else out.push(...pending);
          pending = [];
          discarding = false;
          lineBytes = 0;
        }
        start = end;
      }
      if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
      callback();
    },
  });
  stdin.pipe(stream);
  return {
    stream,
    /** Stops reading stdin, so a closed transport leaves nothing holding the event loop. */
    detach() {
      stdin.unpipe(stream);
      stdin.pause();
    },
  };
}
