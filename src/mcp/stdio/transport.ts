import type { Writable } from 'node:stream';
import {
  type JSONRPCMessage,
  type RequestId,
  serializeMessage,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';

/**
 * The MCP transport of one stdio connection, fed by the connection instead of reading a stream
 * itself. SDK v2's `StdioServerTransport` closes itself when its input ends and so aborts every
 * handler in flight, replies unsent (docs/design.md §5): an EOF could not drain. This one has no
 * input of its own, so only `close()` ends it, and the lifecycle decides when (after the drain).
 *
 * Writing: a message is written at once and `send()` resolves at once; flow control is the
 * connection's (it stops reading requests while replies are backed up), so no send waits on
 * 'drain' and no listener is added per send (the SDK's added two each, and a stalled reader
 * piled them up: docs/design.md §5). `hooks.sent` hears each response as it is written, `hooks.written`
 * once it has left the process (the stream's write callback), with the error if it failed.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  #closed = false;

  constructor(
    private readonly out: Writable,
    private readonly hooks: {
      sent: (id: RequestId) => void;
      written: (id: RequestId | undefined, error: Error | null | undefined) => void;
    },
  ) {}

  async start(): Promise<void> {}

  /** Hands one message read from the client to the SDK (nothing after `close()`). */
  deliver(message: JSONRPCMessage): void {
    if (!this.#closed) this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (this.#closed) throw new Error('the stdio connection is closed');
    const id = isResponse(message) ? message.id : undefined;
    this.out.write(serializeMessage(message), (error) => this.hooks.written(id, error));
    if (id !== undefined) this.hooks.sent(id);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return !('method' in message) && 'id' in message && message.id !== undefined;
}
