import type { Duplex, Writable } from 'node:stream';
import { MAX_REFUSAL_BACKLOG_BYTES, MAX_WAITING_BYTES, refusedLine } from '../jsonrpc.js';
import type { Ledger } from './ledger.js';

/**
 * The two directions a relay writes, each with its backpressure (docs/design.md §2.2): a client
 * that stops reading stops the relay reading the server (whose session then stops dispatching,
 * src/mcp/stdio/connection.ts); a server socket backed up keeps requests waiting here, bounded,
 * while the client is read on (its EOF must be seen: §2.1, the drain).
 */

/** Lines to the client. Each request's unit settles once its reply has left the process. */
export class ClientWriter {
  /** Replies written whose write has not completed: the client has not taken them. */
  unflushed = 0;
  /** A write failed: nobody reads the replies any more, and nothing is owed. */
  failed = false;
  /** Requests refused with no reply at all (even the refusal would have piled up unread). */
  uncounted = 0;
  private waitingForClient = false;

  constructor(
    private readonly stdout: Writable,
    private readonly ledger: Ledger,
    /** The server's stream, paused while the client is backed up. */
    private readonly upstream: () => Duplex | null,
  ) {}

  get backlog(): number {
    return this.stdout.writableLength;
  }

  /** Writes one line; `key`'s unit settles once it has left the process. */
  write(line: string, key?: string): void {
    this.unflushed++;
    const written = this.stdout.write(`${line}\n`, (error) => {
      this.unflushed--;
      if (key !== undefined) this.ledger.settle(key);
      if (error && !this.failed) {
        this.failed = true;
        this.ledger.settleAll();
      }
    });
    const server = this.upstream();
    if (written || server === null || this.waitingForClient) return;
    // The client reads slower than the server answers: stop reading the server meanwhile.
    this.waitingForClient = true;
    server.pause();
    this.stdout.once('drain', () => {
      this.waitingForClient = false;
      server.resume();
    });
  }

  /** A request that will not be sent (too many wait, or the relay is closing): an error, or a count. */
  refuse(key: string, why: 'busy' | 'closing'): void {
    if (!this.failed && this.stdout.writableLength < MAX_REFUSAL_BACKLOG_BYTES) {
      this.write(refusedLine(JSON.parse(key) as string | number, why).trimEnd(), key);
      return;
    }
    this.uncounted++;
    this.ledger.settle(key);
  }
}

/** Lines to the server, in order: written now, or kept while there is none or its socket is backed up. */
export class ServerQueue {
  private items: Array<{ line: string; key?: string }> = [];
  private bytes = 0;
  private blocked: Duplex | null = null;

  constructor(
    private readonly ledger: Ledger,
    private readonly upstream: () => Duplex | null,
    /** A request is written while the server owed nothing: its silence is measured from here. */
    private readonly onFirstOwed: () => void,
  ) {}

  get length(): number {
    return this.items.length;
  }

  /** Whether one more line of `bytes` would take more than `maxWaiting` lines or `MAX_WAITING_BYTES`. */
  full(bytes: number, maxWaiting: number): boolean {
    return this.items.length >= maxWaiting || this.bytes + bytes > MAX_WAITING_BYTES;
  }

  /** The requests waiting, in order (never sent to any server). */
  keys(): string[] {
    return this.items.flatMap((item) => (item.key === undefined ? [] : [item.key]));
  }

  send(line: string, key?: string): void {
    if (this.upstream() !== null && this.blocked === null && this.items.length === 0) {
      this.write(line, key);
      return;
    }
    this.items.push(key === undefined ? { line } : { line, key });
    this.bytes += line.length;
  }

  /** Requests to send before everything waiting (what a server that went away never answered). */
  first(keys: string[]): void {
    const again = keys.flatMap((key) => {
      const owed = this.ledger.get(key);
      return owed ? [{ line: owed.line, key }] : [];
    });
    this.items = [...again, ...this.items];
    this.bytes = this.items.reduce((sum, item) => sum + item.line.length, 0);
  }

  /** Writes what waits, while a server takes it. */
  flush(): void {
    while (this.upstream() !== null && this.blocked === null && this.items.length > 0) {
      const next = this.items.shift()!;
      this.bytes -= next.line.length;
      // Cancelled, or answered by escalation, meanwhile: nothing to send.
      if (next.key !== undefined && !this.ledger.has(next.key)) continue;
      this.write(next.line, next.key);
    }
  }

  /** The server changed: a 'drain' that will never come from the old socket must not hold the rest. */
  unblock(): void {
    this.blocked = null;
  }

  clear(): void {
    this.items = [];
    this.bytes = 0;
  }

  private write(line: string, key?: string): void {
    const stream = this.upstream()!;
    const owed = key === undefined ? undefined : this.ledger.get(key);
    if (owed) {
      if (!this.ledger.owesAny(owed)) this.onFirstOwed();
      owed.sends++;
    }
    if (stream.write(`${line}\n`)) return;
    this.blocked = stream;
    stream.once('drain', () => {
      if (this.blocked !== stream) return;
      this.blocked = null;
      this.flush();
    });
  }
}
