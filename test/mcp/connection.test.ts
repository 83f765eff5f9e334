/**
 * The stdio connection in process: a real McpServer from the SDK, real streams, the real gate.
 * What a client could observe (lines on stdout) and what the lifecycle relies on (the gate's
 * count, abort signals) are checked; the spawned proofs are test/e2e/eof-drain.test.ts and
 * test/e2e/backpressure.test.ts.
 */
import { PassThrough, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { serveStdioConnection } from '../../src/mcp/stdio/connection.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

/** A stdout whose reader takes nothing until the test says so. */
class HeldStdout extends Writable {
  readonly lines: string[] = [];
  /** Every line handed to `write()`, taken by the client or not. */
  readonly handed: string[] = [];
  readonly #waiting: Array<() => void> = [];
  constructor() {
    super({ highWaterMark: 64 });
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(chunk.toString().trimEnd());
    this.#waiting.push(callback);
  }
  override write(chunk: unknown, ...rest: unknown[]): boolean {
    this.handed.push(String(chunk).trimEnd());
    return (super.write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }
  /** The client reads everything written so far. */
  take(): void {
    for (const done of this.#waiting.splice(0)) done();
  }
}

const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const hold = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hold', arguments: {} } });

function setup(stdout: Writable & { lines?: string[] } = new PassThrough(), maxWaiting?: number) {
  const stdin = new PassThrough();
  const gate = createInflightGate();
  const log = recordingLog();
  const release = deferred();
  const signals: AbortSignal[] = [];
  const handler = gate.uncounted();
  const connection = serveStdioConnection({
    createServer: () => {
      const server = new McpServer({ name: 't', version: '1' });
      server.registerTool('hold', { description: 'waits for the test' }, (ctx) =>
        handler.run(
          async (signal) => {
            signals.push(signal);
            await release.promise;
            return { content: [{ type: 'text', text: signal.aborted ? 'aborted' : 'done' }] };
          },
          { signal: ctx.mcpReq.signal },
        ),
      );
      return server;
    },
    stdin,
    stdout,
    log,
    gate,
    maxDispatched: 4,
    maxBacklogBytes: 1,
    ...(maxWaiting !== undefined && { maxWaiting }),
    onClosed: () => {},
  });
  const lines: string[] = [];
  if (stdout instanceof PassThrough) {
    let partial = '';
    stdout.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
  }
  const send = (...messages: object[]) => stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
  return { stdin, gate, log, release, signals, connection, lines, send };
}

const ids = (lines: string[]) => lines.map((l) => JSON.parse(l).id);

describe('the stdio connection', () => {
  it('stdin EOF aborts nothing: a request read before it is answered, and counted until its reply is written', async () => {
    const c = setup();
    c.send(initialize, initialized, hold(1));
    c.stdin.end();
    await flush();
    await c.connection.close();
    await flush();
    expect(c.signals).toHaveLength(1);
    expect(c.gate.size).toBe(1);
    c.release.resolve();
    await flush();
    await flush();
    expect(ids(c.lines)).toEqual([0, 1]);
    expect(JSON.parse(c.lines[1]!).result.content[0].text).toBe('done');
    expect(c.signals[0]!.aborted).toBe(false);
    expect(c.gate.size).toBe(0);
    await c.connection.release();
  });

  it('a request still queued when reading stops is dispatched and answered too', async () => {
    const c = setup();
    c.send(initialize, initialized, ...[1, 2, 3, 4, 5, 6].map(hold));
    c.stdin.end();
    await flush();
    await c.connection.close();
    // Four at a time (maxDispatched); the other two wait, counted.
    expect(c.signals).toHaveLength(4);
    expect(c.gate.size).toBe(6);
    c.release.resolve();
    for (let i = 0; i < 5; i++) await flush();
    expect(ids(c.lines).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(c.gate.size).toBe(0);
    await c.connection.release();
  });

  it('release() aborts what the drain left and settles every unit', async () => {
    const c = setup();
    c.send(initialize, initialized, hold(1));
    await flush();
    await c.connection.close();
    await flush();
    expect(c.gate.size).toBe(1);
    await c.connection.release();
    expect(c.signals[0]!.aborted).toBe(true);
    expect(c.gate.size).toBe(0);
  });

  it('a client that does not read: nothing more is dispatched, one warning, stdin still read; dispatching resumes when it reads', async () => {
    const stdout = new HeldStdout();
    const c = setup(stdout);
    c.release.resolve();
    c.send(initialize, initialized);
    await flush();
    c.send(...[1, 2, 3].map(hold));
    await flush();
    await flush();
    // The initialize reply is unread (over the backlog bound): no request is handed on.
    expect(stdout.lines.map((l) => JSON.parse(l).id)).toEqual([0]);
    expect(c.signals).toHaveLength(0);
    // Read on, so that an EOF behind these requests is seen (the drain's bound starts there).
    expect(c.stdin.isPaused()).toBe(false);
    expect(c.stdin.readableLength).toBe(0);
    expect(c.log.warnings).toEqual([expect.stringContaining('the client is not reading its replies')]);
    c.send(hold(4));
    for (let round = 0; round < 6; round++) {
      stdout.take();
      await flush();
      await flush();
    }
    expect(stdout.lines.map((l) => JSON.parse(l).id)).toEqual([0, 1, 2, 3, 4]);
    expect(c.stdin.isPaused()).toBe(false);
    expect(c.log.warnings).toHaveLength(1);
    expect(stdout.listenerCount('drain')).toBeLessThanOrEqual(1);
    await c.connection.release();
  });

  it('past maxWaiting requests waiting, the next are refused at once; the EOF behind them is seen; release answers those never run', async () => {
    const stdout = new HeldStdout();
    const c = setup(stdout, 2);
    c.send(initialize, initialized);
    await flush();
    let ended = false;
    c.stdin.on('end', () => {
      ended = true;
    });
    c.send(...[1, 2, 3, 4, 5].map(hold));
    c.stdin.end();
    await flush();
    await flush();
    expect(ended).toBe(true);
    // Two wait (maxWaiting); three are refused with an error, written behind the unread reply.
    const written = () => stdout.handed.map((l) => JSON.parse(l) as { id: number; error?: { message: string } });
    expect(written().map((m) => m.id)).toEqual([0, 3, 4, 5]);
    expect(written()[1]!.error?.message).toMatch(/requests are already waiting; this one was not run/);
    expect(c.log.warnings).toContainEqual(expect.stringContaining('further requests are refused'));
    // The two waiting, and the initialize reply the client has not taken.
    expect(c.gate.size).toBe(3);
    // The drain ended with the two still waiting: each is answered, then what was dropped is said.
    await c.connection.close();
    await c.connection.release();
    expect(written().map((m) => m.id)).toEqual([0, 3, 4, 5, 1, 2]);
    expect(written()[4]!.error?.message).toBe('qmd: the server is shutting down; this request was not run');
    expect(c.gate.size).toBe(0);
    expect(c.log.warnings.at(-1)).toMatch(/^dropped 6 replies \(\d+ KiB\) the client did not read$/);
  });

  it('bad lines are answered and the connection keeps serving', async () => {
    const c = setup();
    c.release.resolve();
    c.stdin.write('not json\n{"hello":"world"}\n');
    c.send(initialize);
    await flush();
    await flush();
    const parsed = c.lines.map((l) => JSON.parse(l));
    expect(parsed.map((m) => m.error?.code ?? m.id)).toEqual([-32700, -32600, 0]);
    await c.connection.release();
  });
});
