/**
 * Hand-written semantic mutants of `machines/`: each breaks one promise of
 * docs/design.md, and the generated tests (`test/model/`: paths, probes, the contract oracle)
 * must kill every one. `npm run test:mutants` (scripts/mutants.ts) applies each to a copy of
 * the repository and runs `test/model/`; a few run in `npm test` (test/mutants/).
 *
 * Data, not code: every edit is an exact search/replace that must match `times` times (1 by
 * default), so a mutant whose text the machine no longer contains fails loudly instead of
 * silently testing nothing.
 */

import { MORE_MUTANTS } from './more-mutants.js';
import { FAST_SHARED_MUTANTS, SHARED_MUTANTS } from './shared-mutants.js';
import { WATCH_MUTANTS } from './watch-mutants.js';

export interface Edit {
  search: string;
  replace: string;
  /** How often `search` must occur; every occurrence is replaced. */
  times?: number;
}

export interface Mutant {
  name: string;
  /** The promise it breaks, in docs/design.md's words. */
  breaks: string;
  file:
    | 'machines/lifecycle.ts'
    | 'machines/triggers.ts'
    | 'machines/teardown.ts'
    | 'machines/shared-server.ts'
    | 'machines/session.ts';
  edits: Edit[];
}

const START = "actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],";
const ESCALATE_IN_DRAIN =
  "actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites', 'recordDrainCutShort'],";
const DRAIN_DEADLINE = "actions: ['recordDrainDeadline', 'warnDrainDeadline', 'abortWrites'],";

const LIFECYCLE_MUTANTS: Mutant[] = [
  {
    name: 'drain-skipped',
    breaks: 'close the transport → drain in-flight handlers → dispose the store',
    file: 'machines/lifecycle.ts',
    edits: [{ search: "onDone: { target: 'draining' },", replace: "onDone: { target: 'disposingStore' }," }],
  },
  {
    name: 'dispose-before-close',
    breaks: 'teardown runs in order: the transport closes before the store is disposed',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "id: 'closeTransport',\n        src: 'closeTransport',",
        replace: "id: 'closeTransport',\n        src: 'disposeStore',",
      },
      {
        search: "id: 'disposeStore',\n        src: 'disposeStore',",
        replace: "id: 'disposeStore',\n        src: 'closeTransport',",
      },
    ],
  },
  {
    name: 'signal-ignored-while-draining',
    breaks: 'a second trigger while draining escalates: handlers aborted, drain cut short',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: `        'signal.received': {\n          guard: 'isEscalation',\n          target: 'disposingStore',\n          ${ESCALATE_IN_DRAIN}\n        },\n`,
        replace: '',
      },
    ],
  },
  {
    name: 'same-departure-escalates',
    breaks: 'stdin close after end, and stdout errors after either, are the same departure and do not escalate',
    file: 'machines/triggers.ts',
    edits: [
      {
        search: '  if (PIPE_DEPARTURES.has(first.type) && PIPE_DEPARTURES.has(next.type)) return false;\n',
        replace: '',
      },
    ],
  },
  {
    name: 'transport-close-not-a-pipe-departure',
    breaks: 'the transport closing by itself is the client-pipe departure, with stdin and stdout',
    file: 'machines/triggers.ts',
    edits: [{ search: "  'transport.closed',\n]);", replace: ']);' }],
  },
  {
    name: 'repeated-http-close-escalates',
    breaks: 'a later trigger of the same (non-signal) kind is the same departure',
    file: 'machines/triggers.ts',
    edits: [{ search: '  return next.type !== first.type;', replace: '  return true;' }],
  },
  {
    name: 'store-skipped-after-transport-failure',
    breaks: 'a failed step is logged and the chain continues',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "always: [{ guard: 'failedWhileClosingTransport', target: 'draining' }, { target: 'done' }],",
        replace: "always: [{ target: 'done' }],",
      },
    ],
  },
  {
    name: 'transport-failure-skips-drain',
    breaks: 'after a failed close the chain continues with the drain, not straight to the store',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "{ guard: 'failedWhileClosingTransport', target: 'draining' }",
        replace: "{ guard: 'failedWhileClosingTransport', target: 'disposingStore' }",
      },
    ],
  },
  {
    name: 'drain-deadline-fails-a-step',
    breaks: 'the drain deadline is logged as a warning, not a failed step',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: DRAIN_DEADLINE,
        replace:
          "actions: ['recordDrainDeadline', 'warnDrainDeadline', 'abortWrites', { type: 'recordStepTimeout', params: { step: 'closeTransport' } }],",
      },
    ],
  },
  {
    name: 'drain-deadline-unwarned',
    breaks: 'the drain deadline is logged as a warning',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: DRAIN_DEADLINE,
        replace: "actions: ['recordDrainDeadline', 'abortWrites'],",
      },
    ],
  },
  {
    name: 'earlier-exit-code-overwritten',
    breaks: 'an earlier non-zero exit code is kept',
    file: 'machines/teardown.ts',
    edits: [{ search: '  if (context.priorExitCode !== 0) return context.priorExitCode;\n', replace: '' }],
  },
  {
    name: 'repeated-departure-reenters-closing',
    breaks: 'teardown runs exactly once',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "params: { step: 'closeTransport' } },\n        },\n      },\n      on: {\n        'stdout.closed': {\n          guard: 'isEscalation',\n          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],\n        },",
        replace:
          "params: { step: 'closeTransport' } },\n        },\n      },\n      on: {\n        'stdout.closed': [\n          { guard: 'isEscalation', actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'] },\n          { target: 'closingTransport', reenter: true },\n        ],",
      },
    ],
  },
  {
    name: 'handler-settled-ignored',
    breaks: 'the drain ends when the in-flight count is 0 (handler events count in every state)',
    file: 'machines/lifecycle.ts',
    edits: [{ search: "'handler.settled': { actions: 'countSettled' },", replace: "'handler.settled': {}," }],
  },
  {
    name: 'trigger-count-dropped',
    breaks: 'handlers running when the trigger came are drained (the host hands the count over)',
    file: 'machines/lifecycle.ts',
    edits: [{ search: 'inflight: trigger.inflight ?? context.inflight,', replace: 'inflight: context.inflight,' }],
  },
  {
    name: 'close-step-unbounded',
    breaks: 'each teardown step has its own bound, so a hung step cannot hang the process',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "      after: {\n        stepTimeout: {\n          target: 'failedStep',\n          actions: { type: 'recordStepTimeout', params: { step: 'closeTransport' } },\n        },\n      },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'escalation-does-not-abort-while-draining',
    breaks: 'on escalation in-flight handlers are aborted first',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: ESCALATE_IN_DRAIN,
        replace: "actions: ['recordEscalation', 'announceEscalation', 'abortWrites', 'recordDrainCutShort'],",
        times: 3,
      },
    ],
  },
  {
    name: 'dispose-failure-unreported',
    breaks: 'a failed step is logged, and the exit code becomes 1',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "        onDone: { target: 'done' },\n        onError: {\n          target: 'failedStep',\n          actions: { type: 'recordStepFailure', params: { step: 'disposeStore' } },\n        },",
        replace: "        onDone: { target: 'done' },\n        onError: { target: 'done' },",
      },
    ],
  },
  {
    name: 'starts-in-teardown',
    breaks: 'teardown starts only after a trigger',
    file: 'machines/lifecycle.ts',
    edits: [{ search: "initial: 'connected',", replace: "initial: 'closingTransport'," }],
  },
  {
    name: 'parent-gone-ignored',
    breaks: 'the parent process gone is a shutdown trigger',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: `        'parent.gone': {\n          target: 'closingTransport',\n          ${START}\n        },\n`,
        replace: '',
      },
    ],
  },
  {
    name: 'parent-departure-misnamed',
    breaks: 'every exit is explainable: the breadcrumb names the trigger',
    file: 'machines/triggers.ts',
    edits: [{ search: "      return 'parent exited';", replace: "      return 'stdin closed';" }],
  },
  {
    name: 'trigger-sources-kept',
    breaks: 'adapters remove their listeners when teardown starts',
    file: 'machines/lifecycle.ts',
    edits: [{ search: START, replace: "actions: ['recordTrigger', 'announceShutdown'],", times: 8 }],
  },
  {
    name: 'first-trigger-aborts-handlers',
    breaks: 'in-flight handlers are drained; only an escalation aborts them',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: START,
        replace: "actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources', 'abortHandlers'],",
        times: 8,
      },
    ],
  },
  {
    name: 'escalation-does-not-cut-drain',
    breaks: 'a second trigger cuts the drain short',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "          guard: 'isEscalation',\n          target: 'disposingStore',\n",
        replace: "          guard: 'isEscalation',\n",
        times: 3,
      },
      // Without this too the eventless `wasEscalated` would still leave draining at once.
      {
        search: "        { guard: 'wasEscalated', target: 'disposingStore', actions: 'recordDrainCutShort' },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'drain-unbounded',
    breaks: 'the drain is bounded by its deadline',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "      after: {\n        drainTimeout: {\n          target: 'disposingStore',\n          actions: ['recordDrainDeadline', 'warnDrainDeadline', 'abortWrites'],\n        },\n      },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'idle-drain-warns-of-deadline',
    breaks: 'the drain deadline is warned about when it passes, not otherwise',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "{ guard: 'isIdle', target: 'disposingStore', actions: 'recordDrained' },",
        replace: "{ guard: 'isIdle', target: 'disposingStore', actions: ['recordDrained', 'warnDrainDeadline'] },",
      },
    ],
  },
  {
    name: 'closed-transport-counted-as-failure',
    breaks: 'only a failed or timed-out step is a failed step',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search: "onDone: { target: 'draining' },",
        replace:
          "onDone: { target: 'failedStep', actions: { type: 'recordStepFailure', params: { step: 'closeTransport' } } },",
      },
    ],
  },
  {
    name: 'done-without-disposing',
    breaks: 'dispose the store (the LLM first, then the database) → done',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "        'Close the watcher, then store.close(): the LLM first (it waits for running native calls), then the database.',\n",
        replace:
          "        'Close the watcher, then store.close(): the LLM first (it waits for running native calls), then the database.',\n      always: { target: 'done' },\n",
      },
    ],
  },
  {
    name: 'late-escalation-unrecorded',
    breaks: 'every exit is explainable: shutdown() reports the escalation that came while disposing',
    file: 'machines/lifecycle.ts',
    edits: [
      {
        search:
          "params: { step: 'disposeStore' } },\n        },\n      },\n      on: {\n        'stdout.closed': {\n          guard: 'isEscalation',\n          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],",
        replace:
          "params: { step: 'disposeStore' } },\n        },\n      },\n      on: {\n        'stdout.closed': {\n          guard: 'isEscalation',\n          actions: ['announceEscalation', 'abortHandlers', 'abortWrites'],",
      },
    ],
  },
  {
    // XState drops every event once the root reaches a final state, so "a trigger after done
    // starts a second run" cannot be written as such: a second run needs a `done` that is not
    // final, and that is this mutant. (With a signal there also re-entering `closingTransport`
    // it is killed too, but the loop sends @xstate/graph's getSimplePaths, one depth-first search
    // per target state, into a search of many minutes, so that variant is not in the suite.)
    name: 'done-not-final',
    breaks: 'done is final: teardown completes once, the exit code is set, the watchdog armed',
    file: 'machines/lifecycle.ts',
    edits: [{ search: "      type: 'final',\n", replace: '' }],
  },
];

/**
 * The lifecycle's, its watcher's (./watch-mutants.ts), the shared server's and the session's
 * (./shared-mutants.ts), then those written from the contract alone (./more-mutants.ts).
 */
export const MUTANTS: Mutant[] = [...LIFECYCLE_MUTANTS, ...WATCH_MUTANTS, ...SHARED_MUTANTS, ...MORE_MUTANTS];

/** The mutants `npm test` runs (test/mutants/): cheap to kill, one per kind of rule. */
export const FAST_MUTANTS = [
  'drain-skipped',
  'repeated-departure-reenters-closing',
  'same-departure-escalates',
  'store-skipped-after-transport-failure',
  'drain-ignores-watcher-writes',
  ...FAST_SHARED_MUTANTS,
];

/** `source` with `mutant`'s edits applied; throws if an edit's search text does not occur exactly `times` times. */
export function applyMutant(mutant: Mutant, source: string): string {
  let out = source;
  for (const edit of mutant.edits) {
    const times = edit.times ?? 1;
    const found = out.split(edit.search).length - 1;
    if (found !== times) {
      throw new Error(
        `mutant ${mutant.name}: expected ${times} occurrence(s) of ${JSON.stringify(edit.search)} in ${mutant.file}, found ${found}`,
      );
    }
    out = out.split(edit.search).join(edit.replace);
  }
  if (out === source) throw new Error(`mutant ${mutant.name} changes nothing`);
  return out;
}
