/**
 * Splits a byte stream into newline-delimited lines, as MCP's stdio transport frames them:
 * whole lines only (an unfinished one waits for its newline), a trailing `\r` dropped, blank
 * lines skipped. A line longer than `maxBytes` is dropped up to its newline and reported
 * through `onOversized` with its length in bytes, newline not counted (the count the limit is
 * held to), so a runaway peer cannot make us buffer without bound (the SDK's own `ReadBuffer`
 * closes its transport past 10 MiB instead, leaving a deaf server). A neutral leaf: the stdio
 * connection reads its client with it, the relay its client and its shared server.
 */
export function createLineReader(options: {
  maxBytes: number;
  onLine: (line: string) => void;
  onOversized: (bytes: number) => void;
}): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let discarding = false;
  return (chunk) => {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      pendingBytes += piece.length;
      if (!discarding && pendingBytes > options.maxBytes) {
        discarding = true;
        pending = [];
      }
      if (!discarding) pending.push(piece);
      if (newline === -1) return;
      if (discarding) options.onOversized(pendingBytes);
      else {
        const line = (pending.length === 1 ? pending[0]! : Buffer.concat(pending)).toString('utf8').replace(/\r$/, '');
        if (line.trim() !== '') options.onLine(line);
      }
      pending = [];
      pendingBytes = 0;
      discarding = false;
      start = newline + 1;
    }
  };
}
