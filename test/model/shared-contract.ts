/**
 * docs/design.md §1 and §2.2 written down a second time for `qmd mcp --shared`, as the
 * reference the generated tests judge the shared server's host by. It knows nothing of
 * `machines/`: it is fed what the world did (relays connecting and leaving, handlers starting
 * and settling, signals, `shutdown()`, step results, time) and works out, as a small
 * simulation of its own, what a user must observe: which relays are accepted, which step of
 * the server and of each session runs when, which handlers are aborted, what is warned, the
 * exit code. `./shared-oracle.ts` compares that with what the harness recorded.
 *
 * The rules:
 * - The server starts teardown once: on a signal, on `shutdown()` (once; later calls are the
 *   same call), or when it has had no session for the idle bound (the bound starts afresh
 *   each time the last session leaves). From then on no relay is accepted.
 * - At teardown start the listener is closed (bounded) and every live session not already
 *   ending is told to end. Then the server waits for every session to be done; the drain
 *   deadline does not end that wait, it hurries the sessions (once) with a warning. A signal
 *   before the store's disposal began hurries them too, warned, every time.
 * - The store is disposed (bounded) once, after the listener's step ended and every session
 *   is done; then done: exit code = the code set before the trigger if non-zero, else 1 if a
 *   step of the server failed, else 0. A session's failed step never counts. The summary's
 *   drain word says what last hurried the sessions once the server drained (the listener
 *   closed): `drain deadline passed`, `drain cut short` (a signal), else `drained`. §2.2 does
 *   not say which word a signal that came while the listener was closing earns; the machine
 *   says `drained` (the server's own drain had not begun), and this follows it.
 * - A session ends for one reason: its relay half-closed, its socket closed, its transport
 *   closed, or the server told it to. Then: close its server (bounded) → drain its handlers
 *   (ends when none is in flight, at its own deadline with a warning, or at once once hurried)
 *   → release it (bounded) → done. Once ending (§2.2: "once ending", so until it is done), a
 *   close of its socket (unless that was why it ended) or the server hurrying aborts its
 *   handlers (and any that start later), and cuts its drain short if it is draining. A failed
 *   or timed-out step is warned, and the chain goes on.
 */

export type Signal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';
export type ConnectionEnd = 'connection.ended' | 'connection.closed' | 'transport.closed';
export type DrainEnd = 'idle' | 'deadline' | 'cutShort';

/**
 * The bounds when none is configured: idle 60 s (README, `QMD_SHARED_IDLE_MS`); the server's
 * drain 10 s, longer than a session's own bounds so they end first, and its steps 2 s; a
 * session's drain and steps as the lifecycle's, 5 s and 2 s (docs/design.md §2.2).
 */
export const DOCUMENTED_SHARED_TIMING = {
  idleMs: 60_000,
  drainMs: 10_000,
  stepMs: 2000,
  sessionDrainMs: 5000,
  sessionStepMs: 2000,
} as const;

export interface SharedTiming {
  idleMs: number;
  drainMs: number;
  stepMs: number;
  sessionDrainMs: number;
  sessionStepMs: number;
  watchdogMs: number;
}

/** What the world did. A step is named as the harness names it: `closeListener`, `releaseSession:session-2`. */
export type SharedInput =
  | { kind: 'open' }
  | { kind: 'connection'; session: string; type: ConnectionEnd }
  | { kind: 'signal'; signal: Signal }
  | { kind: 'shutdown'; reason?: string }
  | { kind: 'exitCode'; code: unknown }
  | { kind: 'handler.start'; session: string; handler: object }
  | { kind: 'handler.settle'; handler: object }
  | { kind: 'step.resolve'; step: string }
  | { kind: 'step.reject'; step: string; message: string }
  | { kind: 'advance'; ms: number };

export interface Run {
  /** The harness's name for it: `closeListener`, `closeServer:session-1`. */
  key: string;
  step: 'closeListener' | 'disposeStore' | 'closeServer' | 'releaseSession';
  startedAt: number;
  seq: number;
  endedAt?: number;
  /** Set when the step failed: the rejection's message, or `timed out after N ms`. */
  error?: string;
}

export interface Drain {
  startedAt: number;
  seq: number;
  endedAt?: number;
  how?: DrainEnd;
  /** Handlers still running when it ended. */
  inflightAtEnd?: number;
}

export interface Handler {
  session: string;
  running: boolean;
  /** What aborted it: a signal's name, `the drain deadline`, or `a late close`. */
  abortedBy?: string;
}

export interface Warning {
  text: string;
  at: number;
}

export interface SessionCourse {
  id: string;
  ending?: { trigger: string; at: number };
  readonly runs: Run[];
  drain?: Drain;
  /** The first hurry or late close while it could still be cut short. */
  hurried?: { at: number; by: string };
  readonly stepWarnings: Warning[];
  deadlineWarning?: Warning;
  doneAt?: number;
}

/** `process.exitCode` may be a number or a numeric string; anything else counts as 0. */
function asExitCode(code: unknown): number {
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^-?\d+$/.test(code.trim())) return Number(code.trim());
  return 0;
}

const LATE_CLOSE = 'a late close';
const DEADLINE = 'the drain deadline';

/** The expected course of one run of the shared server, advanced input by input. */
export class SharedContract {
  now = 0;
  #seq = 0;
  /** Each relay that connected, in order: the session id it must get, or `refused`. */
  readonly opens: Array<{ expected: string; at: number }> = [];
  readonly sessions = new Map<string, SessionCourse>();
  readonly handlers = new Map<object, Handler>();
  /** Since when the server has had no session while up (the idle bound runs from there). */
  idleSince?: { at: number; seq: number; afterDeparture: boolean };
  teardown?: {
    words: string;
    at: number;
    prior: number;
    source: 'signal' | 'shutdown' | 'idle';
    afterDeparture: boolean;
  };
  readonly runs: Run[] = [];
  drain?: Drain & { deadlineAt?: number };
  /** The word the summary gives the drain: what last hurried the sessions while the server drained. */
  drainWord: DrainEnd = 'idle';
  readonly escalations: Array<Warning & { words: string }> = [];
  deadlineWarning?: Warning;
  readonly stepWarnings: Warning[] = [];
  finishedAt?: number;
  signalAfterDone = false;
  readonly history: string[] = [];
  #slot: unknown;
  #shutdownCalled = false;

  constructor(readonly timing: SharedTiming) {
    this.idleSince = { at: 0, seq: this.#seq++, afterDeparture: false };
  }

  get live(): SessionCourse[] {
    return [...this.sessions.values()].filter((s) => s.doneAt === undefined);
  }

  get failed(): Run[] {
    return this.runs.filter((r) => r.error !== undefined);
  }

  /** An earlier non-zero code is kept; else 1 if a step of the server failed; else 0. */
  get exitCode(): number {
    const prior = this.teardown?.prior ?? 0;
    if (prior !== 0) return prior;
    return this.failed.length > 0 ? 1 : 0;
  }

  inflight(session: string): number {
    let n = 0;
    for (const h of this.handlers.values()) if (h.session === session && h.running) n++;
    return n;
  }

  feed(input: SharedInput): void {
    this.history.push(describeInput(input));
    switch (input.kind) {
      case 'open':
        this.#open();
        break;
      case 'connection':
        this.#connection(input.session, input.type);
        break;
      case 'signal':
        this.#signal(input.signal);
        break;
      case 'shutdown':
        if (this.#shutdownCalled) break;
        this.#shutdownCalled = true;
        if (!this.teardown && this.finishedAt === undefined)
          this.#startTeardown(input.reason ?? 'shutdown requested', 'shutdown');
        break;
      case 'exitCode':
        this.#slot = input.code;
        break;
      case 'handler.start': {
        const s = this.sessions.get(input.session);
        // A hurried session's gate aborts every handler that starts after the hurry.
        this.handlers.set(input.handler, { session: input.session, running: true, abortedBy: s?.hurried?.by });
        break;
      }
      case 'handler.settle': {
        const h = this.handlers.get(input.handler);
        if (!h?.running) break;
        h.running = false;
        const s = this.sessions.get(h.session);
        if (s?.drain && s.drain.endedAt === undefined && this.inflight(s.id) === 0) this.#endSessionDrain(s, 'idle');
        break;
      }
      case 'step.resolve':
      case 'step.reject': {
        // A result for a step that is not running (it timed out, or never began) is ignored.
        const run = this.#running(input.step);
        if (run) this.#endStep(run, input.kind === 'step.reject' ? input.message : undefined);
        break;
      }
      case 'advance':
        this.#advanceTo(this.now + input.ms);
        break;
    }
  }

  #running(key: string): Run | undefined {
    const [, session] = key.split(':');
    const runs = session === undefined ? this.runs : this.sessions.get(session)?.runs;
    const last = runs?.at(-1);
    return last?.key === key && last.endedAt === undefined ? last : undefined;
  }

  #open(): void {
    if (this.teardown || this.finishedAt !== undefined) {
      this.opens.push({ expected: 'refused', at: this.now });
      return;
    }
    const id = `session-${this.sessions.size + 1}`;
    this.opens.push({ expected: id, at: this.now });
    this.sessions.set(id, { id, runs: [], stepWarnings: [] });
    this.idleSince = undefined;
  }

  #connection(id: string, type: ConnectionEnd): void {
    const s = this.sessions.get(id);
    if (!s || s.doneAt !== undefined) return;
    if (!s.ending) this.#beginEnding(s, type);
    // Once ending, only a socket that closes under it matters, and not if that is why it ended.
    else if (type === 'connection.closed' && s.ending.trigger !== 'connection.closed') this.#hurry(s, LATE_CLOSE);
  }

  #signal(signal: Signal): void {
    if (this.finishedAt !== undefined) {
      this.signalAfterDone = true;
      return;
    }
    if (!this.teardown) {
      this.#startTeardown(signal, 'signal');
      return;
    }
    // Every signal during teardown is "hurry up", until the store's disposal has begun
    // (every session is done by then: there is nobody left to hurry).
    if (this.runs.some((r) => r.step === 'disposeStore')) return;
    this.escalations.push({
      words: signal,
      at: this.now,
      text: `${signal} during teardown (${this.teardown.words}): hurrying ${this.live.length} session(s)`,
    });
    for (const s of this.live) this.#hurry(s, signal);
    if (this.drain && this.drain.endedAt === undefined) this.drainWord = 'cutShort';
  }

  #startTeardown(words: string, source: 'signal' | 'shutdown' | 'idle'): void {
    const afterDeparture = this.idleSince?.afterDeparture ?? false;
    this.teardown = { words, at: this.now, prior: asExitCode(this.#slot), source, afterDeparture };
    this.idleSince = undefined;
    this.runs.push(this.#run('closeListener', 'closeListener'));
    for (const s of this.live) if (!s.ending) this.#beginEnding(s, 'server.closing');
  }

  #run(key: string, step: Run['step']): Run {
    return { key, step, startedAt: this.now, seq: this.#seq++ };
  }

  #beginEnding(s: SessionCourse, trigger: string): void {
    s.ending = { trigger, at: this.now };
    s.runs.push(this.#run(`closeServer:${s.id}`, 'closeServer'));
  }

  /** A hurry or a late close while ending: abort the handlers, and cut the drain short if it is on. */
  #hurry(s: SessionCourse, by: string): void {
    if (!s.ending || s.doneAt !== undefined) return;
    s.hurried ??= { at: this.now, by };
    for (const h of this.handlers.values()) if (h.session === s.id && h.running && !h.abortedBy) h.abortedBy = by;
    if (s.drain && s.drain.endedAt === undefined) this.#endSessionDrain(s, 'cutShort');
  }

  #endStep(run: Run, error?: string): void {
    run.endedAt = this.now;
    if (error !== undefined) run.error = error;
    const [, id] = run.key.split(':');
    const s = id === undefined ? undefined : this.sessions.get(id)!;
    if (error !== undefined) {
      const text = `${s ? `session ${s.id}: ` : ''}teardown step ${run.step} failed: ${error}; continuing`;
      (s ? s.stepWarnings : this.stepWarnings).push({ text, at: this.now });
    }
    switch (run.step) {
      case 'closeListener':
        this.drain = { startedAt: this.now, seq: this.#seq++ };
        if (this.live.length === 0) this.#endDrain();
        break;
      case 'disposeStore':
        this.finishedAt = this.now;
        break;
      case 'closeServer':
        s!.drain = { startedAt: this.now, seq: this.#seq++ };
        if (s!.hurried) this.#endSessionDrain(s!, 'cutShort');
        else if (this.inflight(s!.id) === 0) this.#endSessionDrain(s!, 'idle');
        break;
      case 'releaseSession':
        this.#sessionDone(s!);
        break;
    }
  }

  #endSessionDrain(s: SessionCourse, how: DrainEnd): void {
    Object.assign(s.drain!, { endedAt: this.now, how, inflightAtEnd: this.inflight(s.id) });
    s.runs.push(this.#run(`releaseSession:${s.id}`, 'releaseSession'));
  }

  #sessionDone(s: SessionCourse): void {
    s.doneAt = this.now;
    if (this.live.length > 0) return;
    if (!this.teardown) this.idleSince = { at: this.now, seq: this.#seq++, afterDeparture: true };
    else if (this.drain && this.drain.endedAt === undefined) this.#endDrain();
  }

  #endDrain(): void {
    Object.assign(this.drain!, { endedAt: this.now });
    this.runs.push(this.#run('disposeStore', 'disposeStore'));
  }

  /** The next bound to pass, in time order (ties: the one that began first). */
  #nextDue(): { at: number; seq: number; fire: () => void } | undefined {
    const due: Array<{ at: number; seq: number; fire: () => void }> = [];
    const { idleMs, stepMs, drainMs, sessionStepMs, sessionDrainMs } = this.timing;
    const idle = this.idleSince;
    if (idle && !this.teardown && this.finishedAt === undefined) {
      due.push({
        at: idle.at + idleMs,
        seq: idle.seq,
        fire: () => this.#startTeardown(`idle for ${idleMs} ms`, 'idle'),
      });
    }
    const run = this.runs.at(-1);
    if (run && run.endedAt === undefined) {
      due.push({
        at: run.startedAt + stepMs,
        seq: run.seq,
        fire: () => this.#endStep(run, `timed out after ${stepMs} ms`),
      });
    }
    const drain = this.drain;
    if (drain && drain.endedAt === undefined && drain.deadlineAt === undefined) {
      due.push({ at: drain.startedAt + drainMs, seq: drain.seq, fire: () => this.#deadline() });
    }
    for (const s of this.live) {
      const r = s.runs.at(-1);
      if (r && r.endedAt === undefined) {
        due.push({
          at: r.startedAt + sessionStepMs,
          seq: r.seq,
          fire: () => this.#endStep(r, `timed out after ${sessionStepMs} ms`),
        });
      }
      const d = s.drain;
      if (d && d.endedAt === undefined) {
        due.push({
          at: d.startedAt + sessionDrainMs,
          seq: d.seq,
          fire: () => {
            const n = this.inflight(s.id);
            s.deadlineWarning = {
              text: `session ${s.id}: drain deadline of ${sessionDrainMs} ms passed with ${n} handler(s) in flight`,
              at: this.now,
            };
            this.#endSessionDrain(s, 'deadline');
          },
        });
      }
    }
    return due.sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
  }

  /** The server's drain deadline: warned, the sessions hurried; the wait for them goes on. */
  #deadline(): void {
    const drain = this.drain!;
    drain.deadlineAt = this.now;
    this.drainWord = 'deadline';
    this.deadlineWarning = {
      text: `drain deadline of ${this.timing.drainMs} ms passed with ${this.live.length} session(s) still ending; hurrying them`,
      at: this.now,
    };
    for (const s of this.live) this.#hurry(s, DEADLINE);
  }

  #advanceTo(target: number): void {
    for (;;) {
      const next = this.#nextDue();
      if (!next || next.at > target) break;
      this.now = next.at;
      next.fire();
    }
    this.now = target;
  }

  /** What `done` resolves with (§1.5: every exit is explainable). */
  output() {
    const failed = this.failed.map((r) => ({ step: r.step, error: r.error! }));
    const steps =
      failed.length === 0 ? 'all steps ok' : `failed: ${failed.map((f) => `${f.step} (${f.error})`).join(', ')}`;
    const drain = { idle: 'drained', deadline: 'drain deadline passed', cutShort: 'drain cut short' }[this.drainWord];
    const reason = this.teardown!.words;
    return {
      exitCode: this.exitCode,
      reason,
      sessions: this.sessions.size,
      drain: this.drainWord,
      failedSteps: failed,
      escalatedBy: this.escalations[0]?.words ?? null,
      summary: `${reason}: ${this.sessions.size} session(s) served, ${drain}, ${steps}, exit ${this.exitCode}`,
    };
  }
}

function describeInput(input: SharedInput): string {
  switch (input.kind) {
    case 'open':
      return 'a relay connects';
    case 'connection':
      return `${input.session} ${input.type}`;
    case 'signal':
      return input.signal;
    case 'shutdown':
      return 'shutdown()';
    case 'exitCode':
      return `exitCode=${String(input.code)}`;
    case 'handler.start':
      return `${input.session} handler starts`;
    case 'handler.settle':
      return 'a handler settles';
    case 'step.resolve':
      return `${input.step} resolves`;
    case 'step.reject':
      return `${input.step} rejects`;
    case 'advance':
      return `+${input.ms} ms`;
  }
}
