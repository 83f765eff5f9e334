import type { InflightGate } from '../lifecycle/gate.js';
import { isReplayable } from './replayable.js';

/**
 * What a relay knows of each request it forwards (docs/design.md §2.2): the ledger of ids its
 * client sent and is owed a reply for. Each is one unit of the lifecycle's gate until its
 * reply has left for the client; it keeps the line as the client wrote it (to send again), how
 * many servers it was sent to, and whether a reply came, so that a reply to an id never sent,
 * or a second reply, is told from the one reply owed.
 */
export interface Message {
  id?: unknown;
  method?: unknown;
  params?: { requestId?: unknown; name?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
  result?: unknown;
  error?: unknown;
}

/** A JSON object, or `null` for anything else. */
export function parse(line: string): Message | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Message) : null;
  } catch {
    return null;
  }
}

export const keyOf = (id: unknown): string => JSON.stringify(id);

/** A string `code` an error carries (a QmdError's, or the start failure's a relay passes on). */
export function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** A request owed a reply. */
export interface Owed {
  /** Settles its unit of the gate. */
  done: () => void;
  /** As the client wrote it: what a new server is sent if the old one never answered. */
  line: string;
  method: string;
  /** Safe to send twice (`replayable.ts`). */
  replayable: boolean;
  /** Servers it was written to. */
  sends: number;
  /** A reply came (it may not have reached the client yet): a second one is dropped. */
  answered: boolean;
}

/** Requests the client cancelled, remembered so a reply that crossed the cancel is dropped quietly. */
const MAX_REMEMBERED_CANCELS = 1024;

export class Ledger {
  /** Requests owed a reply, in the order the client sent them (a Map keeps insertion order). */
  private readonly owed = new Map<string, Owed>();
  private readonly cancelled = new Set<string>();

  constructor(private readonly gate: InflightGate) {}

  get size(): number {
    return this.owed.size;
  }

  get(key: string): Owed | undefined {
    return this.owed.get(key);
  }

  has(key: string): boolean {
    return this.owed.has(key);
  }

  keys(): string[] {
    return [...this.owed.keys()];
  }

  entries(): Array<[string, Owed]> {
    return [...this.owed];
  }

  /**
   * Whether a server owes a reply to any request but `except`. Stops at the first: called for
   * every request written, it must not walk a thousand waiting ones each time.
   */
  owesAny(except?: Owed): boolean {
    for (const owed of this.owed.values()) if (owed !== except && owed.sends > 0 && !owed.answered) return true;
    return false;
  }

  /** Sent to a server and not answered yet: what that server owes. */
  unanswered(): Owed[] {
    return [...this.owed.values()].filter((o) => o.sends > 0 && !o.answered);
  }

  /** Starts owing a reply to `message` (once per id), one unit of the gate. */
  track(message: Message & { method: string }, line: string): string {
    const key = keyOf(message.id);
    if (this.owed.has(key)) return key;
    const replayable = isReplayable(message.method, message.params);
    void this.gate
      .run(
        (signal) =>
          new Promise<void>((resolve) => {
            if (signal.aborted) return resolve();
            this.owed.set(key, { done: resolve, line, method: message.method, replayable, sends: 0, answered: false });
            // Escalation aborts the gate: stop waiting for this reply.
            signal.addEventListener('abort', () => this.settle(key), { once: true });
          }),
      )
      .catch(() => {});
    return key;
  }

  /** Its reply has left for the client (or nothing more is owed): the unit settles. */
  settle(key: string): void {
    const owed = this.owed.get(key);
    if (!owed) return;
    this.owed.delete(key);
    owed.done();
  }

  settleAll(): void {
    for (const key of this.keys()) this.settle(key);
  }

  /** The client cancelled it: owed nothing more, and a reply that crossed the cancel is expected. */
  cancel(key: string): void {
    this.cancelled.add(key);
    if (this.cancelled.size > MAX_REMEMBERED_CANCELS) this.cancelled.delete(this.cancelled.values().next().value!);
    this.settle(key);
  }

  /**
   * What to do with a reply to `key`: `forward` (the one reply owed: now marked answered),
   * `cancelled` (the client cancelled it: dropped quietly), `unknown` (never sent, or answered
   * and delivered already) or `second` (a reply came already).
   */
  reply(key: string): 'forward' | 'cancelled' | 'unknown' | 'second' {
    const owed = this.owed.get(key);
    if (owed === undefined) return this.cancelled.delete(key) ? 'cancelled' : 'unknown';
    if (owed.answered) return 'second';
    owed.answered = true;
    return 'forward';
  }
}
