import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, type McpServer, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  describeDropped,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_PARSE_ERROR,
  type JsonRpcErrorEnvelope,
  jsonRpcError,
  MAX_REFUSAL_BACKLOG_BYTES,
  MAX_WAITING_BYTES,
  MAX_WAITING_REQUESTS,
  refusedLine,
} from '../../jsonrpc.js';
import type { InflightGate } from '../../lifecycle/gate.js';
import { createLineReader } from '../../lines.js';
import type { Log } from '../../log.js';
import { LineTransport } from './transport.js';

/** A JSON-RPC message larger than this is refused (the SDK's own stdio buffer caps at 10 MiB). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Requests handed to the server and not answered yet, per connection. */
export const MAX_DISPATCHED = 16;
/** Replies written but not yet taken by the client: past this, no request is read until they are. */
export const MAX_BACKLOG_BYTES = 1024 * 1024;

export interface StdioConnectionOptions {
  /** A fresh server for the connection (and one for a `server/discover` probe, discarded if unused). */
  createServer: () => McpServer;
  stdin: Readable;
  /** The protocol stream: JSON-RPC only (see `claimStdout`). */
  stdout: Writable;
  log: Log;
  /**
   * Each request read counts as one unit of this gate until its reply has been written (the
   * drain waits for replies owed, not only for tool handlers); its handler then runs through
   * the gate's uncounted view. Absent when the caller counts requests itself (the relay).
   */
  gate?: InflightGate;
  /** Names the connection in log lines (`session-3`). */
  name?: string;
  /**
   * A write to stdout failed (the client stopped reading), or the SDK closed the transport
   * itself. The composition root turns this into the matching trigger. (Stdin's end is not
   * reported: the lifecycle and the shared server hear it themselves, and it closes nothing.)
   */
  onClosed: (cause: 'stdout' | 'transport') => void;
  /** The client's `initialize` said who it is (`clientInfo`): for the process's record. */
  onOpening?: (client: { name?: unknown; version?: unknown } | undefined) => void;
  maxMessageBytes?: number;
  maxDispatched?: number;
  maxBacklogBytes?: number;
  /** Requests read and not yet handed to the server, at most (`MAX_WAITING_REQUESTS`, `MAX_WAITING_BYTES`). */
  maxWaiting?: number;
  maxWaitingBytes?: number;
}

export interface StdioConnection {
  /** Teardown step 1: stop reading. Requests already read are still dispatched and answered: the drain waits for them. */
  close(): Promise<void>;
  /** Teardown step 2: close the server (aborting what the drain left) and forget requests never dispatched. */
  release(): Promise<void>;
}

type Queued = ({ message: JSONRPCMessage } | { refusal: JsonRpcErrorEnvelope }) & { bytes: number };

/**
 * One MCP client over stdio, through SDK v2's `serveStdio`: the opening message picks the
 * protocol era (a 2025 `initialize`, or 2026-07-28's `server/discover` and per-request
 * envelope) and pins one server from `createServer` for the connection. Around the SDK:
 *
 * - Reading is ours (`LineTransport`): stdin's EOF does not close the transport, so the
 *   requests read before it run to completion and are answered while stdout is open; only
 *   `release()` (after the drain, its deadline or an escalation) closes the server.
 * - Backpressure: requests wait in a queue and are handed to the server only while fewer than
 *   `maxDispatched` are unanswered and the replies the client has not taken stay under
 *   `maxBacklogBytes`. Stdin is read on whatever the client does, so its EOF is seen behind
 *   any number of requests (the drain then has its bound: docs/design.md §2.1); past
 *   `maxWaiting` requests (or bytes) waiting, a request is refused at once with an error, or,
 *   when even refusals would pile up unread (`MAX_REFUSAL_BACKLOG_BYTES`), only counted and
 *   said at the end. A client that stops reading costs bounded memory and, in the shared
 *   server, no other session's time.
 * - Bad input is answered here and the connection keeps serving: a line over
 *   `maxMessageBytes` (-32600), a line that is not JSON (-32700; the SDK would skip it
 *   silently), JSON that is not JSON-RPC (-32600).
 */
export function serveStdioConnection(options: StdioConnectionOptions): StdioConnection {
  const { log, stdout, stdin, gate } = options;
  const limit = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const maxDispatched = options.maxDispatched ?? MAX_DISPATCHED;
  const maxBacklog = Math.max(options.maxBacklogBytes ?? MAX_BACKLOG_BYTES, stdout.writableHighWaterMark);
  const who = options.name === undefined ? '' : `${options.name}: `;

  let queue: Queued[] = [];
  const maxWaiting = options.maxWaiting ?? MAX_WAITING_REQUESTS;
  const maxWaitingBytes = options.maxWaitingBytes ?? MAX_WAITING_BYTES;
  /** The bytes of the requests in `queue`. */
  let waitingBytes = 0;
  /** Requests refused with no reply (even the refusal could not be written): said at the end. */
  let unansweredUncounted = 0;
  /** Refusals written whose write has not completed: replies the client has not taken. */
  let refusing = 0;
  let warnedRefusing = false;
  /** Requests handed to the server, until they are answered. */
  const dispatched = new Set<string>();
  /** The gate's unit of each request read, until its reply is written: what the drain waits for. */
  const units = new Map<string, () => void>();
  let released = false;
  let stdoutFailed = false;
  let waitingForDrain = false;
  let warnedBacklog = false;
  /** Replies handed to stdout whose write has not completed: the client has not taken them. */
  let unflushed = 0;

  const settle = (key: string): void => {
    const done = units.get(key);
    if (!done) return;
    units.delete(key);
    done();
  };
  const settleAll = (): void => {
    for (const key of [...units.keys()]) settle(key);
  };
  const own = (key: string): void => {
    if (!gate || units.has(key)) return;
    void gate
      .run(
        (signal) =>
          new Promise<void>((resolve) => {
            // The gate may start this unit after the stream failed or the connection was
            // released, when nothing owed remains to settle it: it is owed nothing.
            if (signal.aborted || stdoutFailed || released) return resolve();
            units.set(key, resolve);
            // Escalation aborts the gate: the drain stops waiting for this reply.
            signal.addEventListener('abort', () => settle(key), { once: true });
          }),
      )
      .catch(() => {});
  };

  const onSent = (id: unknown): void => {
    unflushed++;
    dispatched.delete(keyOf(id));
    // Pumped once the reply is on its way, not from inside the SDK's send.
    queueMicrotask(pump);
  };
  /** Nobody can read a reply any more: nothing is owed, and nothing more is dispatched. */
  const failStdout = (): void => {
    if (stdoutFailed) return;
    stdoutFailed = true;
    queue = [];
    settleAll();
    options.onClosed('stdout');
  };
  const onWritten = (id: unknown, error: Error | null | undefined): void => {
    if (id !== undefined) {
      unflushed = Math.max(0, unflushed - 1);
      settle(keyOf(id));
    }
    if (error) failStdout();
    pump();
  };
  // A failed write's callback or the stream's own 'error', whichever comes first: either means
  // no reply can be delivered, so the drain must not wait for any.
  stdout.on('error', failStdout);
  const transport = new LineTransport(stdout, { sent: onSent, written: onWritten });

  const backedUp = (): boolean => stdout.writableNeedDrain && stdout.writableLength >= maxBacklog;
  const onDrain = (): void => {
    waitingForDrain = false;
    pump();
  };
  /** Hands queued requests to the server while the client keeps up; pauses stdin while any wait. */
  function pump(): void {
    while (queue.length > 0 && !released && !stdoutFailed) {
      if (backedUp()) {
        if (!waitingForDrain) {
          waitingForDrain = true;
          stdout.once('drain', onDrain);
          if (!warnedBacklog) {
            warnedBacklog = true;
            const kib = Math.round(stdout.writableLength / 1024);
            log.warn(
              `${who}the client is not reading its replies (${kib} KiB unread); its requests wait until it does (past ${maxWaiting}, they are refused)`,
            );
          }
        }
        break;
      }
      if (dispatched.size >= maxDispatched) break;
      const item = queue.shift()!;
      waitingBytes -= item.bytes;
      if ('refusal' in item) {
        stdout.write(`${JSON.stringify(item.refusal)}\n`);
        continue;
      }
      const { message } = item;
      if (owesReply(message)) dispatched.add(keyOf(message.id));
      const cancelled = cancelledId(message);
      if (cancelled !== undefined) {
        // The SDK never answers a cancelled request: it is owed nothing more.
        dispatched.delete(keyOf(cancelled));
        settle(keyOf(cancelled));
      }
      transport.deliver(message);
    }
  }

  const refuse = (code: number, text: string): void => {
    queue.push({ refusal: jsonRpcError(code, text), bytes: 0 });
  };
  /**
   * A request that will not be run (too many wait, or the connection is closing) is answered
   * with `refusedLine` at once; when even that would pile up behind replies the client does not
   * read, it is only counted.
   */
  const refuseRequest = (id: string | number, why: 'busy' | 'closing'): void => {
    if (stdoutFailed) return;
    if (stdout.writableLength >= MAX_REFUSAL_BACKLOG_BYTES) {
      unansweredUncounted++;
      return;
    }
    refusing++;
    stdout.write(refusedLine(id, why), () => {
      refusing--;
    });
  };
  const readLines = createLineReader({
    maxBytes: limit,
    onOversized: (bytes) => {
      refuse(JSONRPC_INVALID_REQUEST, `Request too large: ${bytes} bytes (the limit is ${limit})`);
      log.warn(`${who}refused a request of ${bytes} bytes (the limit is ${limit})`);
    },
    onLine: (line) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        refuse(JSONRPC_PARSE_ERROR, `Parse error: ${(error as Error).message}`);
        log.warn(`${who}protocol error: a line that is not JSON: ${(error as Error).message}`);
        return;
      }
      if (queue.length >= maxWaiting || waitingBytes + line.length > maxWaitingBytes) {
        // Read on (the EOF must be seen) but keep no more: refused now, not queued without end,
        // and not validated either (a flood of them must cost little more than reading it).
        if (!warnedRefusing) {
          warnedRefusing = true;
          log.warn(
            `${who}${maxWaiting} requests are waiting: the client's further requests are refused until some are answered`,
          );
        }
        const request = value as { id?: unknown; method?: unknown } | null;
        const id = request?.id;
        if (typeof request?.method === 'string' && (typeof id === 'string' || typeof id === 'number'))
          refuseRequest(id, 'busy');
        return;
      }
      let message: JSONRPCMessage;
      try {
        message = parseJSONRPCMessage(value);
      } catch {
        refuse(JSONRPC_INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 message');
        log.warn(`${who}protocol error: a line that is not a JSON-RPC 2.0 message`);
        return;
      }
      if ('method' in message && message.method === 'initialize' && 'id' in message)
        options.onOpening?.((message.params as { clientInfo?: { name?: unknown; version?: unknown } })?.clientInfo);
      if (owesReply(message)) own(keyOf(message.id));
      waitingBytes += line.length;
      queue.push({ message, bytes: line.length });
    },
  });
  const onData = (chunk: Buffer): void => {
    readLines(chunk);
    pump();
  };
  const stopReading = (): void => {
    stdin.off('data', onData);
    stdin.pause();
  };

  const handle = serveStdio(
    () => {
      const server = options.createServer();
      server.server.onerror = (error) => {
        // A reply that could not be written because the client left (a relay SIGKILLed): a
        // departure, which the transport reports as such, not a protocol error.
        if (isWriteError(error) || FAILED_SEND.test(error.message)) return;
        log.warn(`${who}protocol error: ${firstLine(error)}`);
      };
      return server;
    },
    { transport, onerror: (error) => log.warn(`${who}protocol error: ${firstLine(error)}`) },
  );
  // serveStdio set its onclose just now; ours runs after it. The transport closes only when
  // `release()` closes it, or when the SDK closes the pinned server itself.
  const sdkOnClose = transport.onclose;
  transport.onclose = () => {
    sdkOnClose?.();
    if (released) return;
    settleAll();
    options.onClosed('transport');
  };
  stdin.on('data', onData);
  // SDK v2's transport listened for input errors; without a listener one would crash the
  // process. It stays for the connection's life: its 'close' follows, and that is a trigger.
  stdin.on('error', (error) => {
    // Once released, the stream is ours to destroy (the relay's local server): nothing failed.
    if (!released) log.warn(`${who}reading the client failed: ${error.message}`);
  });

  /**
   * The drain is over (its deadline passed, or it was cut short) with replies the client never
   * took, or requests it sent that were never answered: say so, once, before they are dropped.
   * A client whose stdout failed is gone: nothing is owed it, and nothing is said.
   */
  const reportDropped = (): void => {
    if (stdoutFailed) return;
    const unanswered = Math.max(0, units.size - unflushed) + unansweredUncounted;
    const dropped = describeDropped(unflushed + refusing, stdout.writableLength, unanswered);
    if (dropped !== undefined) log.warn(`${who}${dropped}`);
  };
  /** The drain is over: requests never handed to the server are answered, not left hanging. */
  const refuseWaiting = (): void => {
    for (const item of queue) {
      if (!('message' in item) || !owesReply(item.message)) continue;
      refuseRequest(item.message.id, 'closing');
      // Answered now (or counted): no longer a unit the report counts as unanswered.
      settle(keyOf(item.message.id));
    }
    queue = [];
    waitingBytes = 0;
  };

  return {
    async close() {
      stopReading();
    },
    async release() {
      released = true;
      stopReading();
      refuseWaiting();
      // A write the pipe took at once hears so on the next turn: count only what is still waiting.
      await new Promise((resolve) => setImmediate(resolve));
      reportDropped();
      queue = [];
      settleAll();
      stdout.off('drain', onDrain);
      stdout.off('error', failStdout);
      await handle.close();
    },
  };
}

/** A request the server answers while the connection lives (a 2026 subscription is answered only when it ends). */
function owesReply(message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number; method: string } {
  return 'method' in message && 'id' in message && message.method !== 'subscriptions/listen';
}

/** The SDK wraps a failed reply as `Failed to send response: Error: write EPIPE`, with no code. */
const FAILED_SEND =
  /^Failed to send response: .*(EPIPE|ECONNRESET|ERR_STREAM_DESTROYED|ERR_STREAM_WRITE_AFTER_END|after a stream was destroyed|write after end)/;

/** EPIPE and friends: what a write to a pipe whose reader has gone fails with. */
function isWriteError(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (
    code === 'EPIPE' ||
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_DESTROYED' ||
    code === 'ERR_STREAM_WRITE_AFTER_END'
  );
}

function cancelledId(message: JSONRPCMessage): unknown {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
  return (message.params as { requestId?: unknown } | undefined)?.requestId;
}

const keyOf = (id: unknown): string => JSON.stringify(id);

function firstLine(error: Error): string {
  return error.message.split('\n')[0] ?? '';
}
