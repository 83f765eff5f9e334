/**
 * Semantic mutants of the lifecycle's handling of the index's watcher (docs/design.md §2.1,
 * "The watcher"): each is a plausible wrong machine, and the generated tests must kill it by
 * the guarantee it breaks (`npm run test:mutants`; one runs in `npm test`, test/mutants/).
 */
import type { Mutant } from './mutants.js';

const LIFECYCLE = 'machines/lifecycle.ts' as const;
const ESCALATE_IN_DRAIN =
  "actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites', 'recordDrainCutShort'],";
const START = "actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],";

export const WATCH_MUTANTS: Mutant[] = [
  {
    name: 'drain-ignores-watcher-writes',
    breaks: "the drain waits for the watcher's index write as for a handler",
    file: LIFECYCLE,
    edits: [
      {
        search: 'isIdle: ({ context }) => context.inflight === 0 && context.writes === 0,',
        replace: 'isIdle: ({ context }) => context.inflight === 0,',
      },
    ],
  },
  {
    name: 'watcher-write-settled-ignored',
    breaks: 'the drain ends when nothing is in flight (write events count in every state)',
    file: LIFECYCLE,
    edits: [
      { search: "'watch.write.settled': { actions: 'countWriteSettled' },", replace: "'watch.write.settled': {}," },
    ],
  },
  {
    name: 'escalation-keeps-the-write',
    breaks: "an escalation rolls back the watcher's write (its close is signalled)",
    file: LIFECYCLE,
    edits: [
      {
        search: ESCALATE_IN_DRAIN,
        replace: "actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'recordDrainCutShort'],",
        times: 3,
      },
    ],
  },
  {
    name: 'deadline-keeps-the-write',
    breaks: "the drain deadline rolls back the watcher's write, so the store is disposed on time",
    file: LIFECYCLE,
    edits: [
      {
        search: "actions: ['recordDrainDeadline', 'warnDrainDeadline', 'abortWrites'],",
        replace: "actions: ['recordDrainDeadline', 'warnDrainDeadline'],",
      },
    ],
  },
  {
    name: 'first-trigger-rolls-back-the-write',
    breaks:
      "only an escalation or the drain deadline rolls back the watcher's write: a client leaving lets it complete",
    file: LIFECYCLE,
    edits: [
      {
        search: `'stdin.end': {\n          target: 'closingTransport',\n          ${START}`,
        replace: `'stdin.end': {\n          target: 'closingTransport',\n          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources', 'abortWrites'],`,
      },
    ],
  },
  {
    // The trigger hands over the gate's count of handlers; a machine that took the writes to be
    // handed over too would forget the write running when the client left.
    name: 'trigger-forgets-the-write',
    breaks: 'a write the watcher began before the client left is drained, within the drain deadline',
    file: LIFECYCLE,
    edits: [
      {
        search: 'inflight: trigger.inflight ?? context.inflight,',
        replace: 'inflight: trigger.inflight ?? context.inflight,\n        writes: 0,',
      },
    ],
  },
];
