import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { within } from '../../test/support/bounded.js';
import { type Spawned, spawnProcess } from '../../test/support/spawn.js';
import { descendants } from './proc.js';

/** How to start one server contender. */
export interface ServerCommand {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** A fourth pipe, fd 3, for a helper's reports (the soak's subreaper): `child.stdio[3]`. */
  fd3?: boolean;
}

export interface RpcReply {
  message: { id?: unknown; result?: unknown; error?: { code: number; message: string } };
  /** `performance.now()` when the reply's line arrived. */
  at: number;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `performance.now()` at the `exit` event. */
  at: number;
}

export const PROTOCOL_VERSION = '2025-06-18';

/**
 * A server spawned with pipes and spoken to by hand: newline-delimited JSON-RPC, no SDK
 * client, so the parent's own cost is small and the same for every contender. Times are
 * taken in the parent with `performance.now()` where the event is observed (the spawn call,
 * the reply's line, the `exit` event).
 */
export class RpcChild {
  readonly p: Spawned;
  readonly child: ChildProcess;
  readonly spawnedAt: number;
  readonly exited: Promise<ChildExit>;
  private nextId = 1;
  private buffered = '';
  /** Each stderr chunk with the time it arrived (bounded), to time lines the server prints. */
  private readonly errChunks: Array<{ at: number; text: string }> = [];
  private readonly pending = new Map<unknown, (reply: RpcReply) => void>();

  constructor(server: ServerCommand) {
    this.spawnedAt = performance.now();
    // Stdout is the replies, read here; the helper keeps stderr (and guards stdin against EPIPE).
    this.p = spawnProcess(server.command, server.args, {
      env: server.env ?? process.env,
      keepStdout: false,
      ...(server.fd3 ? { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] } : {}),
    });
    this.child = this.p.child;
    this.exited = new Promise<ChildExit>((resolve) => {
      this.child.on('exit', (code, signal) => resolve({ code, signal, at: performance.now() }));
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.errChunks.push({ at: performance.now(), text: chunk });
      if (this.errChunks.length > 256) this.errChunks.shift();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The last 8 KiB of stderr. */
  stderr(): string {
    return this.p.stderr().slice(-8192);
  }

  /** `performance.now()` when the stderr chunk holding `needle` arrived (a line split across chunks is missed). */
  stderrSeenAt(needle: string): number | undefined {
    return this.errChunks.find((chunk) => chunk.text.includes(needle))?.at;
  }

  /** The last line of stderr, for error messages. */
  private lastErrLine(): string {
    return (
      this.stderr()
        .trim()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .at(-1) ?? '(nothing on stderr)'
    );
  }

  private onData(chunk: string): void {
    const at = performance.now();
    this.buffered += chunk;
    for (let nl = this.buffered.indexOf('\n'); nl !== -1; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      let message: RpcReply['message'];
      try {
        message = JSON.parse(line) as RpcReply['message'];
      } catch {
        continue;
      }
      const resolve = this.pending.get(message.id);
      if (resolve) {
        this.pending.delete(message.id);
        resolve({ message, at });
      }
    }
  }

  /** Sends a request; resolves with its reply, or rejects after `ms` or when the child exits first. */
  request(method: string, params: unknown, ms = 30_000): Promise<RpcReply> {
    const id = this.nextId++;
    const reply = new Promise<RpcReply>((resolve, reject) => {
      this.pending.set(id, resolve);
      void this.exited.then((exit) => {
        if (!this.pending.delete(id)) return;
        reject(new Error(`${method}: the server exited first (${exit.code ?? exit.signal}): ${this.lastErrLine()}`));
      });
      this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
    return within(reply, () => `${method}'s reply; stderr ends: ${this.lastErrLine()}`, ms).finally(() =>
      this.pending.delete(id),
    );
  }

  notify(method: string, params: unknown = {}): void {
    this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** `initialize` then `notifications/initialized`: the handshake every client does. */
  async initialize(ms?: number): Promise<RpcReply> {
    const reply = await this.request(
      'initialize',
      { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'qmd-bench', version: '0.0.0' } },
      ms,
    );
    if (reply.message.error) throw new Error(`initialize failed: ${reply.message.error.message}`);
    this.notify('notifications/initialized');
    return reply;
  }

  /** A `tools/call`; rejects on a JSON-RPC error or an `isError` result. */
  async callTool(name: string, args: Record<string, unknown>, ms?: number): Promise<RpcReply> {
    const reply = await this.request('tools/call', { name, arguments: args }, ms);
    const result = reply.message.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
    if (reply.message.error || result?.isError) {
      throw new Error(`${name} failed: ${reply.message.error?.message ?? result?.content?.[0]?.text}`);
    }
    return reply;
  }

  /** Ends stdin (the spec's graceful shutdown); returns `performance.now()` at that moment. */
  endStdin(): number {
    const at = performance.now();
    this.child.stdin?.end();
    return at;
  }

  /** Sends `signal`; returns `performance.now()` just before. */
  signal(signal: NodeJS.Signals): number {
    const at = performance.now();
    this.child.kill(signal);
    return at;
  }

  /** Waits for the exit; SIGKILLs the child (and what it spawned) and rejects if it takes longer than `ms`. */
  async waitExit(ms = 20_000): Promise<ChildExit> {
    try {
      return await within(this.exited, () => `the exit; stderr ends: ${this.lastErrLine()}`, ms);
    } catch (error) {
      this.kill();
      throw error;
    }
  }

  /** SIGKILLs the child if it still runs, and what it spawned (a launcher's server): call in `finally`. */
  kill(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    for (const pid of descendants(this.pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    this.child.kill('SIGKILL');
  }
}

/** Resolves after `ms` (an idle pause between steps of a measured session, never a wait for an event). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
