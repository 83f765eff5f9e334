import type { ChildProcess } from 'node:child_process';
import { type JSONRPCMessage, ReadBuffer, serializeMessage, type Transport } from '@modelcontextprotocol/server';
import { Changes } from './bounded.js';

/**
 * An MCP client transport over a child the test spawned itself, so the test keeps the
 * process: its exit code and signal, every byte of its stdout, and the choice of how to
 * leave (`close()` only ends stdin — the spec's graceful shutdown — nothing else).
 */
export class ChildTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** Every stdout line the server wrote, as written. */
  readonly lines: string[] = [];
  /** Every message this client sent, serialised, in order. */
  readonly sent: string[] = [];
  private readonly buffer = new ReadBuffer();
  private partial = '';
  private readonly changes = new Changes();

  constructor(private readonly child: ChildProcess) {}

  async start(): Promise<void> {
    this.child.stdout?.on('data', (chunk: Buffer) => {
      const text = this.partial + chunk.toString('utf8');
      const parts = text.split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
      this.changes.changed();
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.child.on('exit', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const line = serializeMessage(message);
    this.sent.push(line.trimEnd());
    this.child.stdin?.write(line);
  }

  /** Resolves with the first stdout line that matches, seen already or to come; bounded. */
  waitForLine(match: (line: string) => boolean, ms?: number): Promise<string> {
    return this.changes.until(
      () => this.lines.find(match),
      () => `a matching stdout line; lines were:\n${this.lines.join('\n')}`,
      ms,
    );
  }

  /** Writes raw bytes, for malformed-input tests. */
  writeRaw(text: string): void {
    this.child.stdin?.write(text);
  }

  async close(): Promise<void> {
    this.child.stdin?.end();
  }
}
