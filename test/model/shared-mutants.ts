/**
 * Hand-written semantic mutants of the shared server's machine and the session's, as
 * ./mutants.ts has for the lifecycle (and joins to its list): each breaks one promise of
 * docs/design.md §1 or §2.2, and the generated tests alone (the shared and session paths,
 * probes and the property test, judged by ./shared-oracle.ts) must kill every one.
 */
import type { Mutant } from './mutants.js';

const SERVER = 'machines/shared-server.ts' as const;
const SESSION = 'machines/session.ts' as const;

const SESSION_STARTS = "actions: ['recordTrigger', 'announceEnding', 'detachTriggerSources'],";
const SERVER_IDLE_AFTER =
  "          after: {\n            idleTimeout: { target: '#sharedServer.closingTransport', actions: ['recordIdle', 'announceShutdown'] },\n          },\n";

export const SHARED_MUTANTS: Mutant[] = [
  {
    name: 'store-disposed-with-live-session',
    breaks: 'the store is disposed once, after every session is done',
    file: SERVER,
    edits: [
      {
        search: "always: [{ guard: 'hasNoSessions', target: 'disposingStore', actions: 'recordDrained' }],",
        replace: "always: [{ target: 'disposingStore', actions: 'recordDrained' }],",
      },
    ],
  },
  {
    name: 'no-idle-restart',
    breaks: 'the idle timer starts afresh each time the last session leaves',
    file: SERVER,
    edits: [{ search: "          always: { guard: 'hasNoSessions', target: 'idle' },\n", replace: '' }],
  },
  {
    name: 'idle-timer-runs-while-serving',
    breaks: 'idle means no session: the bound does not run while a session is live',
    file: SERVER,
    edits: [
      { search: SERVER_IDLE_AFTER, replace: '' },
      {
        search: "      initial: 'idle',\n",
        replace:
          "      initial: 'idle',\n      after: {\n        idleTimeout: { target: '#sharedServer.closingTransport', actions: ['recordIdle', 'announceShutdown'] },\n      },\n",
      },
    ],
  },
  {
    name: 'sessions-not-told-to-end',
    breaks: 'closingTransport sends every session server.closing',
    file: SERVER,
    edits: [{ search: "      entry: 'endSessions',\n", replace: '' }],
  },
  {
    name: 'accepting-sessions-during-teardown',
    breaks: 'no relay is accepted once teardown has begun',
    file: SERVER,
    // The host refuses a relay whenever the state is not `connected` (the only compound state),
    // so the machine must both hear `session.opened` in teardown and look compound there.
    edits: [
      {
        search: "    'xstate.done.actor.*': { guard: 'isSessionDone', actions: 'removeSession' },\n",
        replace:
          "    'xstate.done.actor.*': { guard: 'isSessionDone', actions: 'removeSession' },\n    'session.opened': { actions: ['addSession', 'spawnSession'] },\n",
      },
      {
        search: "      entry: 'endSessions',\n",
        replace: "      entry: 'endSessions',\n      initial: 'stopping',\n      states: { stopping: {} },\n",
      },
    ],
  },
  {
    name: 'signal-does-not-hurry-draining-sessions',
    breaks: 'a second signal sends server.escalated: the sessions’ handlers are aborted',
    file: SERVER,
    edits: [
      {
        search: "actions: ['recordEscalation', 'announceEscalation', 'hurrySessions', 'recordDrainCutShort'],",
        replace: "actions: ['recordEscalation', 'announceEscalation', 'recordDrainCutShort'],",
      },
    ],
  },
  {
    name: 'signal-while-closing-ignored',
    breaks: 'once teardown has begun, every signal is "hurry up"',
    file: SERVER,
    edits: [
      {
        search:
          "        'signal.received': {\n          actions: ['recordEscalation', 'announceEscalation', 'hurrySessions'],\n        },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'drain-deadline-does-not-hurry',
    breaks: 'the drain deadline sends server.escalated',
    file: SERVER,
    edits: [
      {
        search: "drainTimeout: { actions: ['recordDrainDeadline', 'warnDrainDeadline', 'hurrySessions'] },",
        replace: "drainTimeout: { actions: ['recordDrainDeadline', 'warnDrainDeadline'] },",
      },
    ],
  },
  {
    name: 'server-drain-deadline-ignored',
    breaks: 'the server’s drain is bounded by its deadline, which hurries the sessions',
    file: SERVER,
    edits: [
      {
        search:
          "      after: {\n        drainTimeout: { actions: ['recordDrainDeadline', 'warnDrainDeadline', 'hurrySessions'] },\n      },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'session-failure-fails-server',
    breaks: 'a session’s failed step is warned about and does not fail the server',
    file: SERVER,
    edits: [
      {
        search:
          '        context.sessions.filter((id) => id !== (event as unknown as { output: SessionOutput }).output.session),\n',
        replace:
          '        context.sessions.filter((id) => id !== (event as unknown as { output: SessionOutput }).output.session),\n      failedSteps: ({ context, event }) => [\n        ...context.failedSteps,\n        ...((event as unknown as { output: SessionOutput }).output.failedSteps as never[]),\n      ],\n',
      },
    ],
  },
  {
    name: 'listener-failure-skips-drain',
    breaks: 'a failed step is warned and the chain goes on with the next step (the drain, not the store)',
    file: SERVER,
    edits: [
      {
        search: "{ guard: 'failedWhileClosingListener', target: 'draining' }",
        replace: "{ guard: 'failedWhileClosingListener', target: 'disposingStore' }",
      },
    ],
  },
  {
    name: 'ended-session-not-forgotten',
    breaks: 'a session that ends is forgotten: the drain ends with the last one',
    file: SERVER,
    edits: [
      {
        search: "'xstate.done.actor.*': { guard: 'isSessionDone', actions: 'removeSession' },",
        replace: "'xstate.done.actor.*': { guard: 'isSessionDone' },",
      },
    ],
  },
  {
    name: 'session-releases-before-draining',
    breaks: 'a session closes its server → drains its handlers → releases',
    file: SESSION,
    edits: [
      {
        search: "        onDone: { target: 'draining' },\n",
        replace: "        onDone: { target: 'releasing' },\n",
      },
    ],
  },
  {
    name: 'late-close-ignored',
    breaks: 'once ending, a socket that closes aborts the session’s handlers and cuts its drain short',
    file: SESSION,
    edits: [
      {
        search:
          "        'connection.closed': { guard: 'isLateClose', actions: ['recordEscalation', 'abortHandlers'] },\n",
        replace: '',
        // closingServer's and releasing's
        times: 2,
      },
      {
        search:
          "        'connection.closed': {\n          guard: 'isLateClose',\n          target: 'releasing',\n          actions: ['recordEscalation', 'abortHandlers', 'recordDrainCutShort'],\n        },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'first-close-counted-as-late',
    breaks: 'a socket closing is the same ending when that is why the session ended',
    file: SESSION,
    edits: [
      {
        search: "isLateClose: ({ context }) => context.trigger !== 'connection.closed',",
        replace: 'isLateClose: () => true,',
      },
    ],
  },
  {
    name: 'hurry-does-not-cut-session-drain',
    breaks: 'the server hurrying cuts a session’s drain short',
    file: SESSION,
    edits: [
      {
        search:
          "        'server.escalated': {\n          target: 'releasing',\n          actions: ['recordEscalation', 'abortHandlers', 'recordDrainCutShort'],",
        replace: "        'server.escalated': {\n          actions: ['recordEscalation', 'abortHandlers'],",
      },
      {
        search: "        { guard: 'wasEscalated', target: 'releasing', actions: 'recordDrainCutShort' },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'session-drain-unbounded',
    breaks: 'a session’s drain is bounded by its own deadline',
    file: SESSION,
    edits: [
      {
        search:
          "      after: {\n        drainTimeout: { target: 'releasing', actions: ['recordDrainDeadline', 'warnDrainDeadline'] },\n      },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'session-close-step-unbounded',
    breaks: 'each of a session’s steps is bounded by its step timeout',
    file: SESSION,
    edits: [
      {
        search:
          "      after: {\n        stepTimeout: {\n          target: 'failedStep',\n          actions: { type: 'recordStepTimeout', params: { step: 'closeServer' } },\n        },\n      },\n",
        replace: '',
      },
    ],
  },
  {
    name: 'session-failure-stops-chain',
    breaks: 'a session’s failed step is warned and its chain goes on',
    file: SESSION,
    edits: [
      {
        search: "always: [{ guard: 'failedWhileClosingServer', target: 'draining' }, { target: 'done' }],",
        replace: "always: [{ target: 'done' }],",
      },
    ],
  },
  {
    name: 'session-trigger-sources-kept',
    breaks: 'a session’s trigger sources are removed when it begins ending',
    file: SESSION,
    edits: [{ search: SESSION_STARTS, replace: "actions: ['recordTrigger', 'announceEnding'],", times: 4 }],
  },
  {
    name: 'session-settled-handlers-ignored',
    breaks: 'a session’s drain ends when its in-flight count is 0',
    file: SESSION,
    edits: [{ search: "'handler.settled': { actions: 'countSettled' },", replace: "'handler.settled': {}," }],
  },
  {
    name: 'session-drain-deadline-unrecorded',
    breaks: 'a session’s end says how its teardown went: its drain deadline passed',
    file: SESSION,
    edits: [
      {
        search: "recordDrainDeadline: assign({ drain: 'deadline' as const }),",
        replace: 'recordDrainDeadline: assign({}),',
      },
    ],
  },
  {
    name: 'session-failures-forgotten',
    breaks: 'a session’s end says how its teardown went: which steps failed',
    file: SESSION,
    edits: [{ search: 'failedSteps: [],', replace: "failedSteps: [{ step: 'closeServer', error: 'earlier' }]," }],
  },
];

/** The shared mutants `npm test` runs (test/mutants/): cheap to kill, the invariant and a session rule. */
export const FAST_SHARED_MUTANTS = ['store-disposed-with-live-session', 'late-close-ignored'];
