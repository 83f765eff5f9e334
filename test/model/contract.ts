/**
 * docs/design.md written down a second time, as the reference the generated tests judge the
 * host by. It knows nothing of `machines/`: it is fed the inputs a replay performs
 * (triggers, the exit code, handlers started and settled, step results, time) and works out
 * what a user must observe: which teardown step runs when, which handlers are aborted, what
 * is warned, the exit code. `./oracle.ts` compares that with what the harness recorded.
 *
 * The rules, from §1–§4: a trigger starts the one teardown; close the transport (bounded) →
 * drain (ends when nothing is in flight, at the deadline, or at once after an escalation) →
 * dispose the store (bounded) → done; a failed or timed-out step is remembered and the chain
 * goes on; exit code = the earlier non-zero code, else 1 if a step failed, else 0.
 *
 * The index's watcher (§2.1 "The watcher"): its writes are in flight as handlers are (the drain
 * waits for both); it stops hearing changes when teardown starts; an escalation or the drain
 * deadline rolls back its write; it is closed before the store is disposed.
 */

export type Step = 'closeTransport' | 'disposeStore';
export type Signal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';
/** Where a trigger comes from, as the contract names the ways a client can leave. */
export type Source = 'stdin.end' | 'stdin.close' | 'stdout' | 'transport' | 'signal' | 'parent' | 'http' | 'shutdown';

/** docs/design.md §2.1: the bounds when none is configured (`stepTimeout` 2000 ms, `drainTimeout` 5000 ms). */
export const DOCUMENTED_TIMING = { drainMs: 5000, stepMs: 2000 } as const;

export interface Timing {
  drainMs: number;
  stepMs: number;
  watchdogMs: number;
  /** The parent watch polls every this many ms from the start. */
  parentPollMs: number;
}

export type Input =
  | { kind: 'trigger'; source: Source; signal?: Signal; reason?: string }
  | { kind: 'exitCode'; code: unknown }
  | { kind: 'handler.start'; handler: object }
  | { kind: 'handler.settle'; handler: object }
  | { kind: 'write.start'; write: object }
  | { kind: 'write.settle'; write: object }
  | { kind: 'step.resolve'; step: Step }
  | { kind: 'step.reject'; step: Step; message: string }
  | { kind: 'advance'; ms: number };

export type DrainEnd = 'idle' | 'deadline' | 'cutShort';

export interface StepRun {
  step: Step;
  startedAt: number;
  endedAt?: number;
  /** Set when the step failed: the rejection's message, or `timed out after N ms`. */
  error?: string;
}

const PIPES = new Set<Source>(['stdin.end', 'stdin.close', 'stdout', 'transport']);

/**
 * §2: the client's pipes (stdin end, stdin close, a stdout error, the transport closing by
 * itself) are one departure; a signal is always new; another kind is new unless it is the
 * kind that began teardown; a programmatic shutdown never escalates.
 */
export function escalates(first: Source, next: Source): boolean {
  if (next === 'shutdown') return false;
  if (next === 'signal') return true;
  if (PIPES.has(first) && PIPES.has(next)) return false;
  return next !== first;
}

/** The breadcrumb's words (§4). */
export function wordsFor(input: { source: Source; signal?: Signal; reason?: string }): string {
  switch (input.source) {
    case 'stdin.end':
    case 'stdin.close':
      return 'stdin closed';
    case 'stdout':
      return 'stdout closed';
    case 'transport':
      return 'transport closed';
    case 'signal':
      return input.signal ?? 'SIGTERM';
    case 'parent':
      return 'parent exited';
    case 'http':
      return 'HTTP server stopped';
    case 'shutdown':
      return input.reason ?? 'shutdown requested';
  }
}

/** `process.exitCode` may be a number or a numeric string; anything else counts as 0. */
function asExitCode(code: unknown): number {
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^-?\d+$/.test(code.trim())) return Number(code.trim());
  return 0;
}

interface Handler {
  running: boolean;
  /** The words of the escalation that aborted it, if one did. */
  abortedBy?: string;
}

/** The expected course of one run, advanced input by input. */
export class Contract {
  now = 0;
  first?: { source: Source; words: string; at: number; prior: number };
  readonly runs: StepRun[] = [];
  drain?: { startedAt: number; endedAt?: number; how?: DrainEnd; inflightAtEnd?: number; writesAtEnd?: number };
  readonly escalations: Array<{ words: string; at: number; inflight: number; writes: number }> = [];
  readonly handlers = new Map<object, Handler>();
  /** The watcher's writes, each running until it settles (committed, or the late settle of a rolled-back one). */
  readonly writes = new Map<object, { running: boolean }>();
  /** Why the watcher's writes were rolled back (an escalation's words, or the deadline), once they were. */
  rolledBackBy?: string;
  finishedAt?: number;
  /** A signal after done means "now": the host may exit at once (safe: everything is disposed). */
  signalAfterDone = false;
  /** Inputs so far, for failure messages. */
  readonly history: string[] = [];
  #slot: unknown;
  #stdoutHeard = false;

  constructor(
    readonly timing: Timing,
    initialExitCode?: unknown,
  ) {
    this.#slot = initialExitCode;
  }

  get inflight(): number {
    let n = 0;
    for (const h of this.handlers.values()) if (h.running) n++;
    return n;
  }

  /** The watcher's writes not settled yet. */
  get writesInFlight(): number {
    let n = 0;
    for (const w of this.writes.values()) if (w.running) n++;
    return n;
  }

  /** Nothing the drain waits for: no handler, no write of the watcher. */
  get idle(): boolean {
    return this.inflight === 0 && this.writesInFlight === 0;
  }

  get current(): StepRun | undefined {
    const last = this.runs.at(-1);
    return last && last.endedAt === undefined ? last : undefined;
  }

  get failed(): StepRun[] {
    return this.runs.filter((r) => r.error !== undefined);
  }

  /** §4 exit codes: an earlier non-zero code is kept; else 1 if a step failed; else 0. */
  get exitCode(): number {
    const prior = this.first?.prior ?? 0;
    if (prior !== 0) return prior;
    return this.failed.length > 0 ? 1 : 0;
  }

  feed(input: Input): void {
    // Setting the exit code to what it already was says nothing worth reading in a failure.
    if (input.kind !== 'exitCode' || asExitCode(input.code) !== asExitCode(this.#slot))
      this.history.push(describeInput(input));
    switch (input.kind) {
      case 'exitCode':
        this.#slot = input.code;
        break;
      case 'trigger':
        if (input.source === 'parent') this.#parentGone();
        else this.#trigger(input);
        break;
      case 'handler.start':
        // The gate aborts every handler that starts after an escalation.
        this.handlers.set(input.handler, { running: true, abortedBy: this.escalations.at(-1)?.words });
        break;
      case 'handler.settle': {
        const h = this.handlers.get(input.handler);
        if (h) h.running = false;
        if (this.drain && this.drain.endedAt === undefined && this.idle) this.#endDrain('idle');
        break;
      }
      case 'write.start':
        this.writes.set(input.write, { running: true });
        break;
      case 'write.settle': {
        const w = this.writes.get(input.write);
        if (w) w.running = false;
        if (this.drain && this.drain.endedAt === undefined && this.idle) this.#endDrain('idle');
        break;
      }
      case 'step.resolve':
      case 'step.reject': {
        // A result for a step that is not running (already timed out, or never begun) is ignored.
        const run = this.current;
        if (run?.step === input.step) this.#endStep(run, input.kind === 'step.reject' ? input.message : undefined);
        break;
      }
      case 'advance':
        this.#advanceTo(this.now + input.ms);
        break;
    }
  }

  /** The parent watch notices at its next poll, and only while it is attached (before teardown). */
  #parentGone(): void {
    const poll = this.timing.parentPollMs;
    const end = this.now + poll;
    this.#advanceTo((Math.floor(this.now / poll) + 1) * poll);
    if (!this.first) this.#trigger({ source: 'parent' });
    this.#advanceTo(end);
  }

  #trigger(input: { source: Source; signal?: Signal; reason?: string }): void {
    const words = wordsFor(input);
    if (!this.first) {
      if (input.source === 'stdout') this.#stdoutHeard = true;
      this.first = { source: input.source, words, at: this.now, prior: asExitCode(this.#slot) };
      this.runs.push({ step: 'closeTransport', startedAt: this.now });
      return;
    }
    // Once teardown has begun, stdin and the parent watch are detached and the transport
    // closes because teardown closed it; the stdout guard reports one error ever.
    if (['stdin.end', 'stdin.close', 'parent', 'transport'].includes(input.source)) return;
    if (input.source === 'stdout') {
      if (this.#stdoutHeard) return;
      this.#stdoutHeard = true;
    }
    if (this.finishedAt !== undefined) {
      if (input.source === 'signal') this.signalAfterDone = true;
      return;
    }
    if (!escalates(this.first.source, input.source)) return;
    this.escalations.push({ words, at: this.now, inflight: this.inflight, writes: this.writesInFlight });
    for (const h of this.handlers.values()) if (h.running && !h.abortedBy) h.abortedBy = words;
    this.rolledBackBy ??= words;
    if (this.drain && this.drain.endedAt === undefined) this.#endDrain('cutShort');
  }

  #endStep(run: StepRun, error?: string): void {
    run.endedAt = this.now;
    if (error !== undefined) run.error = error;
    if (run.step === 'closeTransport') {
      this.drain = { startedAt: this.now };
      if (this.escalations.length > 0) this.#endDrain('cutShort');
      else if (this.idle) this.#endDrain('idle');
    } else {
      this.finishedAt = this.now;
    }
  }

  #endDrain(how: DrainEnd): void {
    Object.assign(this.drain!, {
      endedAt: this.now,
      how,
      inflightAtEnd: this.inflight,
      writesAtEnd: this.writesInFlight,
    });
    if (how === 'deadline') this.rolledBackBy ??= 'the drain deadline';
    this.runs.push({ step: 'disposeStore', startedAt: this.now });
  }

  /** Moves time on, firing the step bound, the drain deadline and the watchdog in order. */
  #advanceTo(target: number): void {
    for (;;) {
      const run = this.current;
      const drainOpen = this.drain && this.drain.endedAt === undefined ? this.drain : undefined;
      const next = run
        ? run.startedAt + this.timing.stepMs
        : drainOpen
          ? drainOpen.startedAt + this.timing.drainMs
          : undefined;
      if (next === undefined || next > target) break;
      this.now = next;
      if (run) this.#endStep(run, `timed out after ${this.timing.stepMs} ms`);
      else this.#endDrain('deadline');
    }
    this.now = target;
  }

  /** The line `Shutdown complete in N ms: …` ends with (§1.5: every exit is explainable). */
  summary(): string {
    const drain = { idle: 'drained', deadline: 'drain deadline passed', cutShort: 'drain cut short' }[this.drain!.how!];
    const failed = this.failed;
    const steps =
      failed.length === 0 ? 'all steps ok' : `failed: ${failed.map((r) => `${r.step} (${r.error})`).join(', ')}`;
    return `${this.first!.words}: ${drain}, ${steps}, exit ${this.exitCode}`;
  }
}

function describeInput(input: Input): string {
  switch (input.kind) {
    case 'trigger':
      return input.source === 'signal' ? (input.signal ?? 'SIGTERM') : input.source;
    case 'exitCode':
      return `exitCode=${String(input.code)}`;
    case 'handler.start':
      return 'handler starts';
    case 'handler.settle':
      return 'handler settles';
    case 'write.start':
      return 'watcher write starts';
    case 'write.settle':
      return 'watcher write settles';
    case 'step.resolve':
      return `${input.step} resolves`;
    case 'step.reject':
      return `${input.step} rejects`;
    case 'advance':
      return `+${input.ms} ms`;
  }
}
