import type { Readable, Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Log } from '../../log.js';
import { JSONRPC_INVALID_REQUEST, JSONRPC_PARSE_ERROR, jsonRpcError } from '../jsonrpc.js';
import { createStdinFilter } from './stdin-filter.js';

/** A JSON-RPC message larger than this is refused (the SDK's own stdio buffer caps at 10 MiB). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface StdioConnectionOptions {
  /** A fresh server for the connection (and one for a `server/discover` probe, discarded if unused). */
  createServer: () => McpServer;
  stdin: Readable;
  /** The protocol stream: JSON-RPC only (see `claimStdout`). */
  stdout: Writable;
  log: Log;
  /**
   * The transport closed, and why as far as it can tell: stdin ended, a write to stdout failed
   * (the client stopped reading), or neither (`close()` closed it, or the SDK gave up). The
   * composition root turns this into the matching trigger; the machine hears it only while
   * connected, and all three are the one pipe departure.
   */
  onClosed: (cause: 'stdin' | 'stdout' | 'transport') => void;
  maxMessageBytes?: number;
}

export interface StdioConnection {
  /** Stops dispatching: closes the pinned server (aborting its handlers' signals) and the transport. */
  close(): Promise<void>;
}

/**
 * One MCP client over stdio, through SDK v2's `serveStdio`: the opening message picks the
 * protocol era (a 2025 `initialize`, or 2026-07-28's `server/discover` and per-request
 * envelope) and pins one server from `createServer` for the connection.
 *
 * Around the SDK: lines over `maxMessageBytes` and lines that are not JSON are answered here
 * (the SDK would close itself, or drop them silently; see `stdin-filter.ts`), and JSON that is
 * not JSON-RPC is answered from the SDK's error report. The server keeps serving after each.
 */
export function serveStdioConnection(options: StdioConnectionOptions): StdioConnection {
  const { log, stdout } = options;
  const limit = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const reply = (code: number, message: string): void => {
    stdout.write(`${JSON.stringify(jsonRpcError(code, message))}\n`);
  };
  // A failed write to stdout is the client leaving, not a protocol error: remembered, not warned.
  let stdoutFailed = false;
  const input = createStdinFilter(options.stdin, {
    maxLineBytes: limit,
    onOversized: (bytes) => {
      reply(JSONRPC_INVALID_REQUEST, `Request too large: ${bytes} bytes (the limit is ${limit})`);
      log.warn(`refused a request of ${bytes} bytes (the limit is ${limit})`);
    },
    onMalformed: (error) => {
      reply(JSONRPC_PARSE_ERROR, `Parse error: ${error.message}`);
      log.warn(`protocol error: a line that is not JSON: ${error.message}`);
    },
  });
  const wire = new StdioServerTransport(input.stream, stdout);
  const handle = serveStdio(
    () => {
      const server = options.createServer();
      server.server.onerror = (error) => {
        // A reply that could not be written because the client left (a relay SIGKILLed): a
        // departure, which the transport reports as such, not a protocol error.
        if (isWriteError(error) || FAILED_SEND.test(error.message)) return;
        log.warn(`protocol error: ${firstLine(error)}`);
      };
      return server;
    },
    {
      transport: wire,
      onerror: (error) => {
        if (isWriteError(error)) {
          stdoutFailed = true;
          return;
        }
        // The transport's parse of a JSON line that is not a JSON-RPC message (zod).
        if (error.name === 'ZodError' || error.name === '$ZodError') {
          reply(JSONRPC_INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 message');
        }
        log.warn(`protocol error: ${firstLine(error)}`);
      },
    },
  );
  // serveStdio owns the wire and set its onclose just now; ours runs after it, whoever closed.
  const sdkOnClose = wire.onclose;
  wire.onclose = () => {
    sdkOnClose?.();
    const stdinEnded = options.stdin.readableEnded || options.stdin.destroyed;
    input.detach();
    options.onClosed(stdoutFailed ? 'stdout' : stdinEnded ? 'stdin' : 'transport');
  };
  return {
    async close() {
      await handle.close();
      input.detach();
    },
  };
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

function firstLine(error: Error): string {
  return error.message.split('\n')[0] ?? '';
}
