/**
 * The contract oracle: checks what a replay observed through the harness — the
 * calls to the fakes and when, breadcrumbs, warnings, the exit code, `process.exit`, the
 * handlers' abort signals, pending timers, listeners — against `./contract.ts`, which worked
 * out from the replay's inputs alone what docs/design.md requires. It never reads the machine's
 * state value or context, so a machine that says the wrong thing fails here even when the
 * host does exactly what the machine says.
 *
 * `check()` runs after every step; the first broken guarantee throws, named:
 * `guarantee "drain before dispose" broken: …, after path: stdin.end → …`. Safety rules come
 * first (nothing happened that must not), then the ones that say what must have happened.
 */
import { isDeepStrictEqual } from 'node:util';
import type { HandlerProbe, Harness } from '../support/host-harness.js';
import { Contract, type Input, type Step, type StepRun, type Timing } from './contract.js';

/** Every guarantee the oracle checks, by the name its failures carry (docs/design.md §1, §2.1, §6). */
export const GUARANTEES = [
  'teardown starts only after a trigger',
  'teardown runs exactly once',
  'every trigger starts teardown',
  'every exit is explainable',
  'transport closed before the store is disposed',
  'a repeated departure never escalates',
  'a new departure during teardown escalates',
  'only an escalation aborts handlers',
  'escalation aborts the in-flight handlers',
  'drain before dispose',
  'the drain deadline is warned about',
  'no drain-deadline warning before the deadline',
  'every teardown step is bounded',
  'a failed step is warned about',
  'only a failed step is reported as failed',
  'a failed step does not stop the chain',
  'the store is disposed before done',
  'the drain is bounded',
  'escalation cuts the drain short',
  'the drain ends when no handler is in flight',
  'teardown completes only after the last step',
  'teardown completes once the last step ends',
  'the exit-code rule',
  'shutdown() resolves with what happened',
  'no exit before teardown completes',
  'the watchdog exits with the computed code',
  'teardown holds the process until done',
  'nothing holds the process outside teardown',
  'trigger sources are detached when teardown starts',
  'only the watchdog is left after done',
  'the watcher stops hearing changes when teardown starts',
  'the watcher is closed before the store is disposed',
  'a write is in flight until it settles',
  'escalation or the drain deadline rolls back the index write',
  'only an escalation or the drain deadline rolls back a write',
] as const;

export type Guarantee = (typeof GUARANTEES)[number];

export class GuaranteeBroken extends Error {
  override name = 'GuaranteeBroken';
}

interface StepCall {
  step: Step;
  index: number;
  at: number;
  /** Handlers the gate had in flight when the step began. */
  inflight: number;
}

/** What a user could see: the harness's records, read and indexed once per check. */
function observe(h: Harness) {
  const steps: StepCall[] = [];
  const lines = (prefix: string) =>
    h.calls.flatMap((c, index) =>
      c.startsWith(prefix) ? [{ text: c.slice(prefix.length), index, at: h.callTimes[index]! }] : [],
    );
  for (const [index, c] of h.calls.entries()) {
    if (c === 'closeTransport' || c === 'disposeStore') {
      steps.push({ step: c, index, at: h.callTimes[index]!, inflight: h.stepLog[steps.length]?.inflight ?? 0 });
    }
  }
  const warnings = lines('warn:');
  return {
    steps,
    breadcrumbs: lines('log:Shutting down ('),
    complete: lines('log:Shutdown complete in '),
    stepWarnings: warnings.filter((w) => w.text.startsWith('teardown step ')),
    deadlineWarnings: warnings.filter((w) => w.text.startsWith('drain deadline ')),
    escalationWarnings: warnings.filter((w) => w.text.includes(' during teardown (')),
    exitCodes: lines('exitCode='),
  };
}

type Observed = ReturnType<typeof observe>;

export class Oracle {
  readonly contract: Contract;
  readonly #timing: Timing;
  #disposeJudged = false;

  constructor(timing: Timing, initialExitCode?: unknown) {
    this.#timing = timing;
    this.contract = new Contract(timing, initialExitCode);
  }

  feed(input: Input): void {
    this.contract.feed(input);
  }

  /** Throws `GuaranteeBroken` naming the first guarantee the observations break. */
  check(h: Harness): void {
    const c = this.contract;
    if (h.clock.now() !== c.now) throw new Error(`oracle out of step: clock ${h.clock.now()} ms, inputs ${c.now} ms`);
    const o = observe(h);
    const fail = (guarantee: Guarantee, detail: string): never => {
      const path = c.history.join(' → ') || '(nothing)';
      throw new GuaranteeBroken(`guarantee "${guarantee}" broken: ${detail}, after path: ${path}`);
    };
    const rules = [
      this.#startsOnce,
      this.#closesFirst,
      this.#escalation,
      this.#drainsFirst,
      this.#stepsRun,
      this.#deadlineWarned,
      this.#completes,
      this.#exits,
      this.#holdsNothing,
      this.#watcher,
    ];
    for (const rule of rules) rule.call(this, h, o, fail);
  }

  #startsOnce(_h: Harness, o: Observed, fail: Fail): void {
    const c = this.contract;
    if (!c.first && (o.breadcrumbs.length > 0 || o.steps.length > 0)) {
      fail('teardown starts only after a trigger', `"${o.breadcrumbs[0]?.text ?? o.steps[0]?.step}" with no trigger`);
    }
    if (o.breadcrumbs.length > 1) fail('teardown runs exactly once', `${o.breadcrumbs.length} breadcrumbs`);
    for (const step of ['closeTransport', 'disposeStore'] as const) {
      const runs = o.steps.filter((s) => s.step === step);
      if (runs.length > 1)
        fail('teardown runs exactly once', `${step} ran ${runs.length} times (at ${times(runs)} ms)`);
    }
    if (!c.first) return;
    const crumb = o.breadcrumbs[0];
    if (!crumb) fail('every trigger starts teardown', `no breadcrumb after ${c.first.words}`);
    if (crumb.text !== `${c.first.words})...` || crumb.at !== c.first.at) {
      fail(
        'every exit is explainable',
        `breadcrumb "Shutting down (${crumb.text}" at ${crumb.at} ms for ${c.first.words}`,
      );
    }
    const close = o.steps[0];
    if (close && close.index < crumb.index)
      fail('every exit is explainable', `${close.step} ran before the breadcrumb`);
  }

  #closesFirst(_h: Harness, o: Observed, fail: Fail): void {
    const dispose = o.steps.find((s) => s.step === 'disposeStore');
    if (!dispose) return;
    const close = o.steps.find((s) => s.step === 'closeTransport');
    const ended = this.contract.runs[0]?.endedAt;
    if (!close || close.index > dispose.index) {
      fail(
        'transport closed before the store is disposed',
        `disposeStore ran at ${dispose.at} ms, closeTransport had not`,
      );
    }
    if (ended === undefined || ended > dispose.at) {
      fail(
        'transport closed before the store is disposed',
        `disposeStore ran at ${dispose.at} ms while closeTransport (begun at ${close.at} ms) was still running`,
      );
    }
  }

  /** Which later triggers escalate, what each warns, and which handlers are aborted. */
  #escalation(h: Harness, o: Observed, fail: Fail): void {
    const c = this.contract;
    const expected = c.escalations.map(
      (e) =>
        `${e.words} during teardown (${c.first!.words}): aborting ${e.inflight} in-flight handler(s)${writesWords(e.writes)}`,
    );
    const seen = o.escalationWarnings.map((w) => w.text);
    if (seen.length > expected.length) {
      fail(
        'a repeated departure never escalates',
        `warned "${seen[expected.length]}" (${c.first?.words} began teardown)`,
      );
    }
    if (seen.length < expected.length) {
      fail('a new departure during teardown escalates', `no warning for ${c.escalations[seen.length]!.words}`);
    }
    for (const [i, text] of seen.entries()) {
      if (text !== expected[i]) fail('every exit is explainable', `warned "${text}", expected "${expected[i]}"`);
    }
    // The harness's closeTransport aborts nothing (the real server.close() would), so every
    // abort seen here is the lifecycle's own.
    for (const [key, handler] of c.handlers) {
      const probe = key as HandlerProbe;
      const n = h.handlers.indexOf(probe);
      if (probe.signal.aborted && !handler.abortedBy) {
        fail('only an escalation aborts handlers', `handler #${n} aborted (${String(probe.signal.reason)})`);
      }
      if (!probe.signal.aborted && handler.abortedBy) {
        fail('escalation aborts the in-flight handlers', `handler #${n} not aborted after ${handler.abortedBy}`);
      }
    }
  }

  /** The store is never disposed under a running handler, unless the deadline passed or an escalation aborted it. */
  #drainsFirst(h: Harness, o: Observed, fail: Fail): void {
    const c = this.contract;
    const dispose = o.steps.find((s) => s.step === 'disposeStore');
    // Judged once, at the check right after the step that began it: the handlers running
    // then are the ones it began under (a handler started later is no concern of this rule).
    if (!dispose || this.#disposeJudged) return;
    this.#disposeJudged = true;
    const writes = c.writesInFlight;
    const how = c.drain?.how;
    if (writes > 0 && how !== 'deadline' && how !== 'cutShort' && c.runs[0]?.endedAt !== undefined) {
      fail('a write is in flight until it settles', `disposeStore ran with ${writes} index write(s) unsettled`);
    }
    if (dispose.inflight === 0) return;
    const drainStart = c.runs[0]?.endedAt;
    const deadline = drainStart !== undefined && dispose.at >= drainStart + this.#timing.drainMs;
    if (deadline && !o.deadlineWarnings.some((w) => w.index < dispose.index)) {
      fail(
        'the drain deadline is warned about',
        `disposeStore ran with ${dispose.inflight} handler(s) in flight, unwarned`,
      );
    }
    const escalated = c.escalations.some((e) => e.at <= dispose.at);
    const running = [...c.handlers].filter(([, x]) => x.running).map(([p]) => p as HandlerProbe);
    const abortedFirst = running.every((p) => p.abortedAt !== undefined && p.abortedAt <= dispose.index);
    if (deadline || (escalated && abortedFirst)) return;
    const why = escalated ? 'an escalation that did not abort them first' : 'no escalation';
    fail(
      'drain before dispose',
      `disposeStore ran with ${dispose.inflight} handler(s) in flight, no deadline, ${why} (${h.handlers.length} started)`,
    );
  }

  #deadlineWarned(_h: Harness, o: Observed, fail: Fail): void {
    const drain = this.contract.drain;
    const passed = drain?.how === 'deadline';
    const text = `drain deadline of ${this.#timing.drainMs} ms passed with ${drain?.inflightAtEnd} handler(s)${writesWords(drain?.writesAtEnd ?? 0)} in flight; disposing the store`;
    const seen = o.deadlineWarnings;
    if (!passed && seen.length > 0) fail('no drain-deadline warning before the deadline', `warned "${seen[0]!.text}"`);
    if (passed && (seen.length !== 1 || seen[0]!.text !== text || seen[0]!.at !== drain.endedAt)) {
      fail(
        'the drain deadline is warned about',
        `expected "${text}" at ${drain.endedAt} ms, saw ${seen.length} warning(s)`,
      );
    }
  }

  /**
   * Liveness, step by step in the contract's order: each step that is due began when it was
   * due; each that failed or timed out was warned about when it did. Then nothing else ran
   * and nothing else was reported as failed.
   */
  #stepsRun(_h: Harness, o: Observed, fail: Fail): void {
    const c = this.contract;
    let warned = 0;
    for (const [i, run] of c.runs.entries()) {
      const seen = o.steps[i];
      if (seen?.step !== run.step || seen.at !== run.startedAt) {
        const what = seen ? `${seen.step} began at ${seen.at} ms` : 'nothing ran';
        fail(this.#whyRun(run, o), `${run.step} due at ${run.startedAt} ms, ${what}`);
      }
      if (run.error === undefined) continue;
      const w = o.stepWarnings[warned++];
      const text = `teardown step ${run.step} failed: ${run.error}; continuing`;
      if (w?.text === text && w.at === run.endedAt) continue;
      fail(
        run.error.startsWith('timed out') ? 'every teardown step is bounded' : 'a failed step is warned about',
        w
          ? `warned "${w.text}" at ${w.at} ms, expected "${text}" at ${run.endedAt} ms`
          : `no warning for ${run.step} (${run.error})`,
      );
    }
    const extraWarning = o.stepWarnings[warned];
    if (extraWarning)
      fail('only a failed step is reported as failed', `warned "${extraWarning.text}" at ${extraWarning.at} ms`);
    const extra = o.steps[c.runs.length];
    if (extra) {
      fail(
        extra.step === 'disposeStore' ? 'drain before dispose' : 'teardown runs exactly once',
        `${extra.step} ran at ${extra.at} ms, not due (${c.inflight} handler(s) in flight, drain ${c.drain ? 'open' : 'not begun'})`,
      );
    }
  }

  /**
   * The guarantee that makes a step due: the trigger for the first; for the second, if
   * teardown ended without it, the failed first step or plainly the store left open; else
   * the way the drain was due to end.
   */
  #whyRun(run: StepRun, o: Observed): Guarantee {
    if (run.step === 'closeTransport') return 'every trigger starts teardown';
    if (o.exitCodes.length > 0) {
      return this.contract.runs[0]?.error !== undefined
        ? 'a failed step does not stop the chain'
        : 'the store is disposed before done';
    }
    const drain = this.contract.drain!;
    if (drain.how === 'deadline') return 'the drain is bounded';
    if (drain.how === 'cutShort') return 'escalation cuts the drain short';
    return 'the drain ends when no handler is in flight';
  }

  /** done: the exit code set once, by the rule, and one line that explains the exit. */
  #completes(h: Harness, o: Observed, fail: Fail): void {
    const c = this.contract;
    if (c.finishedAt === undefined) {
      const early = o.exitCodes[0] ?? o.complete[0];
      if (early) fail('teardown completes only after the last step', `"${early.text}" at ${early.at} ms`);
      return;
    }
    const code = c.exitCode;
    if (o.exitCodes.length === 0) {
      fail('teardown completes once the last step ends', `disposeStore ended at ${c.finishedAt} ms, no exit code set`);
    }
    if (o.exitCodes.length > 1) fail('teardown runs exactly once', `exit code set ${o.exitCodes.length} times`);
    if (o.exitCodes[0]!.text !== String(code)) {
      const failed = c.failed.map((r) => r.step).join(', ') || 'none';
      fail(
        'the exit-code rule',
        `exit code ${o.exitCodes[0]!.text}, expected ${code} (earlier code ${c.first!.prior}, failed steps: ${failed})`,
      );
    }
    const ms = Math.round((c.finishedAt - c.first!.at) * 10) / 10;
    const line = `${ms} ms: ${c.summary()}`;
    if (o.complete.length !== 1 || o.complete[0]!.text !== line) {
      fail('every exit is explainable', `"Shutdown complete in ${o.complete[0]?.text}", expected "…${line}"`);
    }
    // The API's account of the teardown: what `shutdown()` returns to its caller.
    const expected = {
      exitCode: code,
      reason: c.first!.words,
      failedSteps: c.failed.map((r) => ({ step: r.step, error: r.error })),
      drain: c.drain!.how,
      escalatedBy: c.escalations[0]?.words ?? null,
      summary: c.summary(),
    };
    if (!isDeepStrictEqual(h.output(), expected)) {
      fail(
        'shutdown() resolves with what happened',
        `${JSON.stringify(h.output())}, expected ${JSON.stringify(expected)}`,
      );
    }
  }

  /** `process.exit` never before done; after it, only with the computed code, by the watchdog at the latest. */
  #exits(h: Harness, _o: Observed, fail: Fail): void {
    const c = this.contract;
    if (c.finishedAt === undefined) {
      if (h.exits.length > 0) fail('no exit before teardown completes', `exit(${h.exits[0]}) mid-teardown`);
      return;
    }
    const due = c.signalAfterDone || c.now >= c.finishedAt + this.#timing.watchdogMs;
    const expected = due ? [c.exitCode] : [];
    if (h.exits.length > 1 || (h.exits.length === 1 && h.exits[0] !== c.exitCode) || (due && h.exits.length === 0)) {
      fail(
        'the watchdog exits with the computed code',
        `exits [${h.exits.join(', ')}], expected [${expected.join(', ')}]`,
      );
    }
  }

  /** A ref'd timer holds the process exactly while teardown runs; listeners and the parent poll go. */
  #holdsNothing(h: Harness, _o: Observed, fail: Fail): void {
    const c = this.contract;
    const running = c.first !== undefined && c.finishedAt === undefined;
    const ref = h.clock.pending('ref');
    if (running && ref === 0) fail('teardown holds the process until done', 'no ref’d timer mid-teardown');
    if (!running && ref > 0) fail('nothing holds the process outside teardown', `${ref} ref’d timer(s) pending`);
    if (c.first && h.listeners().stdin > 0)
      fail('trigger sources are detached when teardown starts', 'stdin listened to');
    if (c.finishedAt !== undefined) {
      const unref = h.clock.pending('unref');
      const watchdog = c.now < c.finishedAt + this.#timing.watchdogMs ? 1 : 0;
      if (unref !== watchdog)
        fail('only the watchdog is left after done', `${unref} unref’d timer(s), expected ${watchdog}`);
    }
  }

  /**
   * The index's watcher, when the harness has one (§2.1 "The watcher"): `close()` is called as
   * teardown starts (after the breadcrumb, before `closeTransport`) and has resolved before
   * `disposeStore` runs; its signal fires exactly when an escalation or the drain deadline
   * rolls the writes back.
   */
  #watcher(h: Harness, o: Observed, fail: Fail): void {
    const w = h.watcher;
    if (!w) return;
    const c = this.contract;
    const index = (call: string) => h.calls.indexOf(call);
    const close = index('watcher.close');
    if (!c.first && close !== -1)
      fail('the watcher stops hearing changes when teardown starts', 'closed with no trigger');
    if (c.first) {
      const crumb = o.breadcrumbs[0]?.index ?? -1;
      const step = index('closeTransport');
      if (close === -1 || close < crumb || (step !== -1 && close > step) || h.callTimes[close] !== c.first.at) {
        fail(
          'the watcher stops hearing changes when teardown starts',
          close === -1
            ? `not closed after ${c.first.words}`
            : `close() at call ${close}, breadcrumb ${crumb}, step ${step}`,
        );
      }
      if (w.holding) fail('the watcher stops hearing changes when teardown starts', 'its timer is still held');
    }
    const dispose = index('disposeStore');
    if (dispose !== -1) {
      const closed = index('watcher.closed');
      if (closed === -1 || closed > dispose)
        fail('the watcher is closed before the store is disposed', 'disposeStore ran before close() resolved');
    }
    const aborted = w.closeSignal?.aborted ?? false;
    if (c.rolledBackBy !== undefined && !aborted)
      fail('escalation or the drain deadline rolls back the index write', `not rolled back after ${c.rolledBackBy}`);
    if (c.rolledBackBy === undefined && aborted)
      fail(
        'only an escalation or the drain deadline rolls back a write',
        `rolled back (${String(w.closeSignal?.reason)})`,
      );
  }
}

type Fail = (guarantee: Guarantee, detail: string) => never;

/** ` and 1 index write(s)`, or nothing: the host's words for the watcher's writes in a warning. */
function writesWords(writes: number): string {
  return writes > 0 ? ` and ${writes} index write(s)` : '';
}

function times(calls: StepCall[]): string {
  return calls.map((s) => s.at).join(', ');
}
