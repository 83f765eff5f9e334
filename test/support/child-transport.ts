import type { ChildProcess } from 'node:child_process';
import { type JSONRPCMessage, ReadBuffer, serializeMessage, type Transport } from '@modelcontextprotocol/server';

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
  private readonly lineWaiters = new Set<() => void>();

  constructor(private readonly child: ChildProcess) {}

  async start(): Promise<void> {
    this.child.stdout?.on('data', (chunk: Buffer) => {
      const text = this.partial + chunk.toString('utf8');
      const parts = text.split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
      for (const wake of [...this.lineWaiters]) wake();
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

  /** Resolves when a stdout line matches, rejects after `ms` with the lines seen. */
  waitForLine(match: (line: string) => boolean, ms = 20_000): Promise<string> {
    const found = () => this.lines.find(match);
    const now = found();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.lineWaiters.delete(check);
        reject(new Error(`no matching stdout line within ${ms} ms; lines were:\n${this.lines.join('\n')}`));
      }, ms);
      const check = (): void => {
        const line = found();
        if (line === undefined) return;
        clearTimeout(timer);
        this.lineWaiters.delete(check);
        resolve(line);
      };
      this.lineWaiters.add(check);
    });
  }

  /** Writes raw bytes, for malformed-input tests. */
  writeRaw(text: string): void {
    this.child.stdin?.write(text);
  }

  async close(): Promise<void> {
    this.child.stdin?.end();
  }
}
