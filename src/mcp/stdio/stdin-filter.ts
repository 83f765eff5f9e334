import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';

/**
 * What sits between stdin and the SDK's `StdioServerTransport`, for two things the SDK does
 * not do for us (read in its source, 1.32.2 and 2.4.0 alike):
 * - It buffers at most 10 MiB of an unfinished line; past that it closes itself, leaving a deaf
 *   server. Here a line longer than `maxLineBytes` is dropped up to its newline and reported
 *   through `onOversized`, and the server keeps serving.
 * - v2's `ReadBuffer` skips a line that is not JSON without a word to anyone (v1 reported it),
 *   so its client waits forever. With `onMalformed`, each whole line is parsed once here and
 *   one that is not JSON is dropped and reported (the caller answers -32700); blank lines are
 *   dropped silently. Parsing twice costs about a microsecond for a request-sized line.
 * Everything else passes through untouched, as whole lines.
 */
export function createStdinFilter(
  stdin: Readable,
  options: {
    maxLineBytes: number;
    onOversized: (bytes: number) => void;
    onMalformed?: (error: SyntaxError) => void;
  },
): { stream: Transform; detach(): void } {
  /** A whole line: passed on, or dropped (blank, or reported as not JSON). */
  const admit = (line: Buffer[]): boolean => {
    if (options.onMalformed === undefined) return true;
    const text = Buffer.concat(line).toString('utf8');
    if (text.trim() === '') return false;
    try {
      JSON.parse(text);
      return true;
    } catch (error) {
      options.onMalformed(error as SyntaxError);
      return false;
    }
  };
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
          else if (admit(pending)) out.push(...pending);
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
