/**
 * The contract oracle of `qmd mcp --shared`: checks what a replay observed through the shared
 * harness (the calls to the fakes and when, `open:` and `detach:` records, breadcrumbs,
 * warnings, the exit code, `process.exit`, each handler's abort signal, pending timers)
 * against `./shared-contract.ts`, which worked out from the replay's inputs alone what
 * docs/design.md §1 and §2.2 require. It never reads a machine's state value or context.
 *
 * `check()` runs after every step; the first broken guarantee throws, named:
 * `guarantee "the store is disposed only after every session is done" broken: …, after path: …`.
 * Safety first (nothing happened that must not), then what must have happened.
 *
 * The order within one instant is not a guarantee where nothing can tell it: at teardown start
 * the host tells the sessions to end before it closes the listener (both in the same step; no
 * relay is accepted from the trigger on either way), so the rule is that both happen at the
 * teardown's instant, after its breadcrumb.
 */
import { isDeepStrictEqual } from 'node:util';
import type { SessionHandler, SharedHarness } from '../support/host-harness.js';
import {
  type Run,
  type SessionCourse,
  SharedContract,
  type SharedInput,
  type SharedTiming,
} from './shared-contract.js';

/** Every guarantee the oracle checks, by the name its failures carry. */
export const SHARED_GUARANTEES = [
  'a relay is accepted until teardown begins',
  'no new session once teardown began',
  'teardown starts only after a trigger',
  'teardown runs exactly once',
  'every trigger starts teardown',
  'the server leaves within its idle bound',
  'the idle bound restarts when the last session leaves',
  'every exit is explainable',
  'the listener closes when teardown starts',
  'every live session is told to end',
  'the listener is closed before the store is disposed',
  'the store is disposed only after every session is done',
  'the store is disposed once every session is done',
  'a second signal hurries the sessions',
  'only a signal during teardown hurries the sessions',
  'the drain deadline hurries the sessions',
  'no drain-deadline warning before the deadline',
  'a hurry aborts the session’s handlers',
  'a late close aborts the session’s handlers',
  'only a hurry or a late close aborts handlers',
  'a session ends once',
  'a session ends only for a reason',
  'a session’s ending starts its teardown',
  'a session’s trigger sources are detached when it begins ending',
  'a session drains before it releases',
  'a session’s drain ends when its handlers have settled',
  'a session’s drain is bounded',
  'a late close cuts the session’s drain short',
  'a hurry cuts the session’s drain short',
  'a session’s failed step is warned about',
  'every session step is bounded',
  'a session’s failed step does not stop its chain',
  'only a failed session step is warned about',
  'a session’s drain deadline is warned about',
  'no session drain-deadline warning before its deadline',
  'a session’s end says how its teardown went',
  'a failed step is warned about',
  'every teardown step is bounded',
  'only a failed step is reported as failed',
  'a failed step does not stop the chain',
  'a session’s failed step does not fail the server',
  'the exit-code rule',
  'teardown completes only after the last step',
  'teardown completes once the last step ends',
  'shutdown() resolves with what happened',
  'no exit before teardown completes',
  'the watchdog exits with the computed code',
  'teardown holds the process until done',
  'no ref’d timer is left after done',
  'only the watchdog is left after done',
] as const;

export type SharedGuarantee = (typeof SHARED_GUARANTEES)[number];

export class SharedGuaranteeBroken extends Error {
  override name = 'GuaranteeBroken';
}

type Fail = (guarantee: SharedGuarantee, detail: string) => never;
type Entry = { text: string; index: number; at: number };

/** What a user could see: the harness's records, read and indexed once per check. */
function observe(h: SharedHarness) {
  const entries: Entry[] = h.calls.map((text, index) => ({ text, index, at: h.callTimes[index]! }));
  const after = (prefix: string) =>
    entries.flatMap((e) => (e.text.startsWith(prefix) ? [{ ...e, text: e.text.slice(prefix.length) }] : []));
  const warnings = after('warn:');
  return {
    opens: after('open:'),
    steps: entries.filter((e) => /^(closeListener|disposeStore|closeServer:|releaseSession:)/.test(e.text)),
    detaches: after('detach:'),
    breadcrumbs: after('log:Shutting down ('),
    endings: after('log:session ').flatMap((e) => {
      const m = /^(\S+) ending \((.*)\)$/.exec(e.text);
      return m ? [{ ...e, id: m[1]!, trigger: m[2]! }] : [];
    }),
    sessionsDone: after('log:session ').flatMap((e) => {
      const m = /^(\S+) done: (.*)$/.exec(e.text);
      return m ? [{ ...e, id: m[1]!, summary: m[2]! }] : [];
    }),
    complete: after('log:Shutdown complete in '),
    escalations: warnings.filter((w) => w.text.includes(' during teardown (')),
    deadlineWarnings: warnings.filter((w) => w.text.startsWith('drain deadline of ')),
    stepWarnings: warnings.filter((w) => w.text.startsWith('teardown step ')),
    sessionWarnings: (id: string) => warnings.filter((w) => w.text.startsWith(`session ${id}: `)),
    exitCodes: after('exitCode='),
  };
}

type Observed = ReturnType<typeof observe>;

export class SharedOracle {
  readonly contract: SharedContract;

  constructor(readonly timing: SharedTiming) {
    this.contract = new SharedContract(timing);
  }

  feed(input: SharedInput): void {
    this.contract.feed(input);
  }

  /** Throws naming the first guarantee the observations break. */
  check(h: SharedHarness): void {
    const c = this.contract;
    if (h.clock.now() !== c.now) throw new Error(`oracle out of step: clock ${h.clock.now()} ms, inputs ${c.now} ms`);
    const o = observe(h);
    const fail: Fail = (guarantee, detail) => {
      const path = c.history.join(' → ') || '(nothing)';
      throw new SharedGuaranteeBroken(`guarantee "${guarantee}" broken: ${detail}, after path: ${path}`);
    };
    // Sessions before the server's warnings: a session that fails to end in time makes the
    // server's drain deadline pass too, and the session's broken promise is the cause.
    const rules = [
      this.#opens,
      this.#startsOnce,
      this.#storeLast,
      this.#aborts,
      this.#sessions,
      this.#hurries,
      this.#serverSteps,
      this.#completes,
      this.#exits,
      this.#holds,
    ];
    for (const rule of rules) rule.call(this, h, o, fail);
  }

  #opens(_h: SharedHarness, o: Observed, fail: Fail): void {
    for (const [i, open] of this.contract.opens.entries()) {
      const seen = o.opens[i]?.text ?? '(nothing)';
      if (seen === open.expected) continue;
      fail(
        open.expected === 'refused'
          ? 'no new session once teardown began'
          : 'a relay is accepted until teardown begins',
        `relay #${i + 1} at ${open.at} ms: ${seen}, expected ${open.expected}`,
      );
    }
  }

  #startsOnce(_h: SharedHarness, o: Observed, fail: Fail): void {
    const c = this.contract;
    if (o.breadcrumbs.length > 1) fail('teardown runs exactly once', `${o.breadcrumbs.length} breadcrumbs`);
    for (const step of ['closeListener', 'disposeStore']) {
      const runs = o.steps.filter((s) => s.text === step);
      if (runs.length > 1) fail('teardown runs exactly once', `${step} ran ${runs.length} times`);
    }
    const server = o.steps.filter((s) => s.text === 'closeListener' || s.text === 'disposeStore');
    if (!c.teardown) {
      const early = o.breadcrumbs[0] ?? server[0];
      if (early) {
        fail(
          'teardown starts only after a trigger',
          `"${early.text}" at ${early.at} ms with ${c.live.length} session(s) live and no trigger`,
        );
      }
      return;
    }
    const t = c.teardown;
    const why =
      t.source !== 'idle'
        ? 'every trigger starts teardown'
        : t.afterDeparture
          ? 'the idle bound restarts when the last session leaves'
          : 'the server leaves within its idle bound';
    const crumb = o.breadcrumbs[0];
    if (!crumb) fail(why, `no breadcrumb after ${t.words} at ${t.at} ms`);
    if (crumb.at !== t.at) fail(why, `teardown began at ${crumb.at} ms, due at ${t.at} ms (${t.words})`);
    if (crumb.text !== `${t.words})...`) fail('every exit is explainable', `breadcrumb "Shutting down (${crumb.text}"`);
    const first = [...server, ...o.endings][0];
    if (first && first.index < crumb.index) fail('every exit is explainable', `"${first.text}" before the breadcrumb`);
  }

  /** The shared server's invariant (docs/design.md §2.2): the store is disposed once, after every session is done. */
  #storeLast(_h: SharedHarness, o: Observed, fail: Fail): void {
    const dispose = o.steps.find((s) => s.text === 'disposeStore');
    if (!dispose) return;
    for (const s of this.contract.sessions.values()) {
      const release = o.steps.find((e) => e.text === `releaseSession:${s.id}`);
      if (s.doneAt !== undefined && s.doneAt <= dispose.at && release && release.index < dispose.index) continue;
      fail(
        'the store is disposed only after every session is done',
        `disposeStore ran at ${dispose.at} ms while ${s.id} was ${phase(s)}`,
      );
    }
    const close = this.contract.runs[0];
    if (close?.endedAt === undefined || close.endedAt > dispose.at) {
      fail('the listener is closed before the store is disposed', `disposeStore ran at ${dispose.at} ms`);
    }
  }

  #hurries(_h: SharedHarness, o: Observed, fail: Fail): void {
    const c = this.contract;
    const seen = o.escalations;
    if (seen.length > c.escalations.length) {
      fail('only a signal during teardown hurries the sessions', `warned "${seen[c.escalations.length]!.text}"`);
    }
    if (seen.length < c.escalations.length) {
      fail('a second signal hurries the sessions', `no warning for ${c.escalations[seen.length]!.words}`);
    }
    for (const [i, w] of seen.entries()) {
      const expected = c.escalations[i]!;
      if (w.text !== expected.text)
        fail('every exit is explainable', `warned "${w.text}", expected "${expected.text}"`);
    }
    const deadline = c.deadlineWarning;
    const warned = o.deadlineWarnings;
    if (!deadline && warned.length > 0)
      fail('no drain-deadline warning before the deadline', `warned "${warned[0]!.text}"`);
    if (deadline && (warned.length !== 1 || warned[0]!.text !== deadline.text || warned[0]!.at !== deadline.at)) {
      fail(
        'the drain deadline hurries the sessions',
        `expected "${deadline.text}" at ${deadline.at} ms, saw ${warned.length} warning(s)`,
      );
    }
  }

  /** Which handlers are aborted: those a hurry or a late close met, and only those. */
  #aborts(h: SharedHarness, _o: Observed, fail: Fail): void {
    // The harness's closeServer aborts nothing (the real McpServer's close would): every abort
    // seen here is the host's own.
    for (const [key, handler] of this.contract.handlers) {
      const probe = key as SessionHandler;
      const n = h.handlers.indexOf(probe);
      if (probe.signal.aborted && !handler.abortedBy) {
        fail('only a hurry or a late close aborts handlers', `handler #${n} of ${handler.session} aborted`);
      }
      if (!probe.signal.aborted && handler.abortedBy) {
        fail(
          handler.abortedBy === 'a late close'
            ? 'a late close aborts the session’s handlers'
            : 'a hurry aborts the session’s handlers',
          `handler #${n} of ${handler.session} not aborted after ${handler.abortedBy}`,
        );
      }
    }
  }

  #sessions(_h: SharedHarness, o: Observed, fail: Fail): void {
    for (const s of this.contract.sessions.values()) {
      const calls = (key: string) => o.steps.filter((e) => e.text === key);
      const endings = o.endings.filter((e) => e.id === s.id);
      for (const key of [`closeServer:${s.id}`, `releaseSession:${s.id}`]) {
        if (calls(key).length > 1) fail('a session ends once', `${key} ran ${calls(key).length} times`);
      }
      if (endings.length > 1) fail('a session ends once', `${endings.length} "ending" lines for ${s.id}`);
      if (!s.ending) {
        const early = endings[0] ?? calls(`closeServer:${s.id}`)[0];
        if (early) fail('a session ends only for a reason', `"${early.text}" at ${early.at} ms, nothing ended ${s.id}`);
        continue;
      }
      const why =
        s.ending.trigger === 'server.closing'
          ? 'every live session is told to end'
          : 'a session’s ending starts its teardown';
      const line = endings[0];
      if (line?.at !== s.ending.at) fail(why, `no "${s.id} ending" line at ${s.ending.at} ms for ${s.ending.trigger}`);
      if (line.trigger !== s.ending.trigger) {
        fail('every exit is explainable', `"${s.id} ending (${line.trigger})", expected ${s.ending.trigger}`);
      }
      if (!o.detaches.some((d) => d.text === s.id && d.at === s.ending!.at)) {
        fail('a session’s trigger sources are detached when it begins ending', `${s.id} at ${s.ending.at} ms`);
      }
      this.#sessionChain(s, o, fail);
      this.#sessionDone(s, o, fail);
      const release = calls(`releaseSession:${s.id}`)[0];
      if (release && !s.runs.some((r) => r.step === 'releaseSession')) {
        fail(
          'a session drains before it releases',
          `${release.text} ran at ${release.at} ms while ${s.id} was ${phase(s)}`,
        );
      }
    }
  }

  /**
   * A session's chain in time order: each step began when due (the release with the drain
   * deadline's warning, if that is what ended the drain), each failure warned when it happened;
   * then nothing more was warned.
   */
  #sessionChain(s: SessionCourse, o: Observed, fail: Fail): void {
    const calls = (key: string) => o.steps.filter((e) => e.text === key);
    const warned = o.sessionWarnings(s.id);
    const steps = warned.filter((w) => w.text.includes(': teardown step '));
    const deadlines = warned.filter((w) => w.text.includes(': drain deadline '));
    let failures = 0;
    for (const run of s.runs) {
      const seen = calls(run.key)[0];
      if (seen?.at !== run.startedAt) {
        fail(
          whySessionRun(s, run),
          `${run.key} due at ${run.startedAt} ms, ${seen ? `began at ${seen.at} ms` : 'nothing ran'}`,
        );
      }
      const deadline = s.deadlineWarning;
      if (run.step === 'releaseSession' && deadline) {
        const w = deadlines[0];
        if (deadlines.length !== 1 || w?.text !== deadline.text || w.at !== deadline.at) {
          fail('a session’s drain deadline is warned about', `expected "${deadline.text}" at ${deadline.at} ms`);
        }
      }
      if (run.error === undefined) continue;
      const expected = s.stepWarnings[failures]!;
      const w = steps[failures++];
      if (w?.text === expected.text && w.at === expected.at) continue;
      fail(
        run.error.startsWith('timed out') ? 'every session step is bounded' : 'a session’s failed step is warned about',
        w
          ? `warned "${w.text}" at ${w.at} ms, expected "${expected.text}" at ${expected.at} ms`
          : `no "${expected.text}"`,
      );
    }
    const extra = steps[failures];
    if (extra) fail('only a failed session step is warned about', `warned "${extra.text}" at ${extra.at} ms`);
    if (!s.deadlineWarning && deadlines.length > 0) {
      fail('no session drain-deadline warning before its deadline', `warned "${deadlines[0]!.text}"`);
    }
  }

  /** Done, one line says how the session's teardown went: how its drain ended, which steps failed. */
  #sessionDone(s: SessionCourse, o: Observed, fail: Fail): void {
    const lines = o.sessionsDone.filter((d) => d.id === s.id);
    if (s.doneAt === undefined) {
      if (lines.length > 0)
        fail('a session’s end says how its teardown went', `"${lines[0]!.text}" before ${s.id} was done`);
      return;
    }
    const drain = { idle: 'drained', deadline: 'drain deadline passed', cutShort: 'drain cut short' }[s.drain!.how!];
    const failed = s.runs.filter((r) => r.error !== undefined);
    const steps =
      failed.length === 0 ? 'all steps ok' : `failed: ${failed.map((r) => `${r.step} (${r.error})`).join(', ')}`;
    const expected = `${drain}, ${steps}`;
    if (lines.length !== 1 || lines[0]!.summary !== expected || lines[0]!.at !== s.doneAt) {
      fail(
        'a session’s end says how its teardown went',
        lines[0]
          ? `"${lines[0].text}" at ${lines[0].at} ms (${lines.length} line(s)), expected "${s.id} done: ${expected}" at ${s.doneAt} ms`
          : `no "${s.id} done: ${expected}" at ${s.doneAt} ms`,
      );
    }
  }

  /** The server's own chain: the listener at teardown start, the store when it is due; failures warned. */
  #serverSteps(_h: SharedHarness, o: Observed, fail: Fail): void {
    const c = this.contract;
    for (const [i, expected] of c.stepWarnings.entries()) {
      const w = o.stepWarnings[i];
      if (w?.text === expected.text && w.at === expected.at) continue;
      fail(
        expected.text.includes('timed out') ? 'every teardown step is bounded' : 'a failed step is warned about',
        w
          ? `warned "${w.text}" at ${w.at} ms, expected "${expected.text}" at ${expected.at} ms`
          : `no "${expected.text}"`,
      );
    }
    const extra = o.stepWarnings[c.stepWarnings.length];
    if (extra) fail('only a failed step is reported as failed', `warned "${extra.text}" at ${extra.at} ms`);
    const seen = o.steps.filter((s) => s.text === 'closeListener' || s.text === 'disposeStore');
    for (const [i, run] of c.runs.entries()) {
      const s = seen[i];
      if (s?.text === run.step && s.at === run.startedAt) continue;
      const why =
        run.step === 'closeListener'
          ? 'the listener closes when teardown starts'
          : c.runs[0]!.error !== undefined && c.drain!.startedAt === run.startedAt
            ? 'a failed step does not stop the chain'
            : 'the store is disposed once every session is done';
      fail(why, `${run.step} due at ${run.startedAt} ms, ${s ? `${s.text} began at ${s.at} ms` : 'nothing ran'}`);
    }
    const more = seen[c.runs.length];
    if (more) fail('teardown runs exactly once', `${more.text} ran at ${more.at} ms, not due`);
  }

  /** done: the exit code set once, by the rule, and one line that explains the exit. */
  #completes(h: SharedHarness, o: Observed, fail: Fail): void {
    const c = this.contract;
    if (c.finishedAt === undefined) {
      const early = o.exitCodes[0] ?? o.complete[0];
      if (early) fail('teardown completes only after the last step', `"${early.text}" at ${early.at} ms`);
      return;
    }
    if (o.exitCodes.length === 0) {
      fail('teardown completes once the last step ends', `disposeStore ended at ${c.finishedAt} ms, no exit code set`);
    }
    if (o.exitCodes.length > 1) fail('teardown runs exactly once', `exit code set ${o.exitCodes.length} times`);
    const code = c.exitCode;
    if (o.exitCodes[0]!.text !== String(code)) {
      const sessionFailed = [...c.sessions.values()].some((s) => s.runs.some((r) => r.error !== undefined));
      fail(
        code === 0 && sessionFailed ? 'a session’s failed step does not fail the server' : 'the exit-code rule',
        `exit code ${o.exitCodes[0]!.text}, expected ${code} (earlier code ${c.teardown!.prior}, failed steps: ${c.failed.map((r) => r.step).join(', ') || 'none'})`,
      );
    }
    const expected = c.output();
    const ms = Math.round((c.finishedAt - c.teardown!.at) * 10) / 10;
    const line = `${ms} ms: ${expected.summary}`;
    if (o.complete.length !== 1 || o.complete[0]!.text !== line) {
      fail('every exit is explainable', `"Shutdown complete in ${o.complete[0]?.text}", expected "…${line}"`);
    }
    if (!isDeepStrictEqual(h.output(), expected)) {
      fail(
        'shutdown() resolves with what happened',
        `${JSON.stringify(h.output())}, expected ${JSON.stringify(expected)}`,
      );
    }
  }

  /** `process.exit` never before done; after it, only with the computed code, by the watchdog at the latest. */
  #exits(h: SharedHarness, _o: Observed, fail: Fail): void {
    const c = this.contract;
    if (c.finishedAt === undefined) {
      if (h.exits.length > 0) fail('no exit before teardown completes', `exit(${h.exits[0]}) mid-teardown`);
      return;
    }
    const due = c.signalAfterDone || c.now >= c.finishedAt + this.timing.watchdogMs;
    if (h.exits.length > 1 || (h.exits.length === 1 && h.exits[0] !== c.exitCode) || (due && h.exits.length === 0)) {
      fail(
        'the watchdog exits with the computed code',
        `exits [${h.exits.join(', ')}], expected [${due ? c.exitCode : ''}]`,
      );
    }
  }

  /** A ref'd timer holds the process while teardown runs; after done only the unref'd watchdog is left. */
  #holds(h: SharedHarness, _o: Observed, fail: Fail): void {
    const c = this.contract;
    const ref = h.clock.pending('ref');
    if (c.teardown && c.finishedAt === undefined && ref === 0) {
      fail('teardown holds the process until done', 'no ref’d timer mid-teardown');
    }
    if (c.finishedAt === undefined) return;
    if (ref > 0) fail('no ref’d timer is left after done', `${ref} ref’d timer(s) pending`);
    const unref = h.clock.pending('unref');
    const watchdog = c.now < c.finishedAt + this.timing.watchdogMs ? 1 : 0;
    if (unref !== watchdog)
      fail('only the watchdog is left after done', `${unref} unref’d timer(s), expected ${watchdog}`);
  }
}

function phase(s: SessionCourse): string {
  if (s.doneAt !== undefined) return `done at ${s.doneAt} ms`;
  const run = s.runs.at(-1);
  if (!s.ending) return 'serving';
  if (run?.step === 'releaseSession') return 'releasing';
  return s.drain ? 'draining' : 'closing its server';
}

/** The guarantee that made a session's step due. */
function whySessionRun(s: SessionCourse, run: Run): SharedGuarantee {
  if (run.step === 'closeServer') {
    return s.ending?.trigger === 'server.closing'
      ? 'every live session is told to end'
      : 'a session’s ending starts its teardown';
  }
  const close = s.runs[0]!;
  const drain = s.drain!;
  if (close.error !== undefined && drain.startedAt === drain.endedAt && drain.how !== 'cutShort') {
    return 'a session’s failed step does not stop its chain';
  }
  if (drain.how === 'deadline') return 'a session’s drain is bounded';
  if (drain.how === 'cutShort') {
    return s.hurried?.by === 'a late close'
      ? 'a late close cuts the session’s drain short'
      : 'a hurry cuts the session’s drain short';
  }
  return 'a session’s drain ends when its handlers have settled';
}
