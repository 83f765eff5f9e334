/**
 * Semantic mutants written from docs/design.md (§2.1, §2.2, the exit-code rule) and the
 * machines alone, not from the tests, so they test the tests: plausible wrong machines (an
 * exit code that changes during teardown, a bound configured at 0 read as "use the default",
 * defaults mistaken, time passing while sessions are live, a later trigger that
 * only random commands used to send). `npm run test:mutants` must kill each with a
 * deterministic test (test/model/mutants-results.md names it).
 */
import type { Mutant } from './mutants.js';

const LIFECYCLE = 'machines/lifecycle.ts' as const;
const TRIGGERS = 'machines/triggers.ts' as const;
const TEARDOWN = 'machines/teardown.ts' as const;
const SERVER = 'machines/shared-server.ts' as const;
const SESSION = 'machines/session.ts' as const;

const IDLE_AFTER =
  "          after: {\n            idleTimeout: { target: '#sharedServer.closingTransport', actions: ['recordIdle', 'announceShutdown'] },\n          },\n";

export const MORE_MUTANTS: Mutant[] = [
  // ---- the lifecycle -----------------------------------------------------------------------
  {
    name: 'exit-code-of-the-latest-escalation',
    breaks: 'an earlier non-zero code is kept: the code set when teardown began, not a later one',
    file: LIFECYCLE,
    edits: [
      {
        search: 'escalatedBy: ({ context, event }) => context.escalatedBy ?? describeTrigger(event as TriggerEvent),\n',
        replace:
          'escalatedBy: ({ context, event }) => context.escalatedBy ?? describeTrigger(event as TriggerEvent),\n      priorExitCode: ({ event }) => normalizeExitCode((event as TriggerEvent).exitCode),\n',
      },
    ],
  },
  {
    name: 'zero-drain-bound-read-as-default',
    breaks: 'the drain is bounded by the configured drainTimeout (0 is a bound)',
    file: LIFECYCLE,
    edits: [
      {
        search: 'input.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS',
        replace: 'input.drainTimeoutMs || DEFAULT_DRAIN_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'zero-step-bound-read-as-default',
    breaks: 'every teardown step is bounded by the configured stepTimeout (0 is a bound)',
    file: LIFECYCLE,
    edits: [
      {
        search: 'input.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS',
        replace: 'input.stepTimeoutMs || DEFAULT_STEP_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'default-bounds-swapped',
    breaks: '`stepTimeout` 2000 ms, `drainTimeout` 5000 ms unless configured',
    file: LIFECYCLE,
    edits: [
      {
        search: 'input.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS',
        replace: 'input.drainTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS',
      },
      {
        search: 'input.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS',
        replace: 'input.stepTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'escalation-named-by-the-latest',
    breaks: 'shutdown() says which trigger escalated first',
    file: LIFECYCLE,
    edits: [
      {
        search: 'escalatedBy: ({ context, event }) => context.escalatedBy ?? describeTrigger(event as TriggerEvent),',
        replace: 'escalatedBy: ({ event }) => describeTrigger(event as TriggerEvent),',
      },
    ],
  },
  {
    name: 'transport-close-heard-during-teardown',
    breaks: 'once teardown has begun the transport closes because teardown closed it: not a departure',
    file: LIFECYCLE,
    edits: [
      {
        search:
          "        'http.closed': {\n          guard: 'isEscalation',\n          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],\n        },\n      },\n    },\n",
        replace:
          "        'http.closed': {\n          guard: 'isEscalation',\n          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],\n        },\n        'transport.closed': { guard: 'isEscalation', actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'] },\n      },\n    },\n",
        times: 2,
      },
    ],
  },
  {
    name: 'stdin-close-not-a-pipe-departure',
    breaks: 'stdin end, stdin close, a stdout error and the transport’s close are one departure',
    file: TRIGGERS,
    edits: [{ search: "  'stdin.close',\n  'stdout.closed',", replace: "  'stdout.closed'," }],
  },
  {
    name: 'repeated-signal-not-an-escalation',
    breaks: 'a repeated signal always escalates (a second Ctrl-C)',
    file: TRIGGERS,
    edits: [{ search: "  if (next.type === 'signal.received') return true;\n", replace: '' }],
  },
  {
    name: 'numeric-string-exit-code-ignored',
    breaks: 'an earlier non-zero code is kept (process.exitCode may be a numeric string)',
    file: TEARDOWN,
    edits: [
      {
        search: "const n = typeof code === 'string' ? Number.parseInt(code, 10) : code;",
        replace: 'const n = code;',
      },
    ],
  },
  {
    name: 'failed-step-overrides-earlier-code',
    breaks: 'exit 1 if a step failed, else 0; an earlier non-zero code is kept',
    file: TEARDOWN,
    edits: [
      {
        search:
          '  if (context.priorExitCode !== 0) return context.priorExitCode;\n  return context.failedSteps.length > 0 ? 1 : 0;',
        replace: '  if (context.failedSteps.length > 0) return 1;\n  return context.priorExitCode;',
      },
    ],
  },
  // ---- the shared server -------------------------------------------------------------------
  {
    name: 'idle-exit-drops-exit-code',
    breaks: 'the idle exit keeps an exit code set before it, as every trigger does',
    file: SERVER,
    edits: [{ search: '      priorExitCode: normalizeExitCode(context.readExitCode()),\n', replace: '' }],
  },
  {
    name: 'zero-idle-bound-read-as-default',
    breaks: 'no session for idleTimeout ends the server (0 is a bound)',
    file: SERVER,
    edits: [
      {
        search: 'input.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS',
        replace: 'input.idleTimeoutMs || DEFAULT_IDLE_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'zero-server-drain-bound-read-as-default',
    breaks: 'the drain deadline hurries the sessions at the configured bound (0 is a bound)',
    file: SERVER,
    edits: [
      {
        search: 'input.drainTimeoutMs ?? DEFAULT_SERVER_DRAIN_TIMEOUT_MS',
        replace: 'input.drainTimeoutMs || DEFAULT_SERVER_DRAIN_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'zero-server-step-bound-read-as-default',
    breaks: 'every teardown step of the server is bounded as configured (0 is a bound)',
    file: SERVER,
    edits: [
      {
        search: 'input.stepTimeoutMs ?? DEFAULT_SERVER_STEP_TIMEOUT_MS',
        replace: 'input.stepTimeoutMs || DEFAULT_SERVER_STEP_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'zero-session-drain-bound-read-as-default',
    breaks: 'a session’s drain is bounded as configured (0 is a bound)',
    file: SERVER,
    edits: [
      {
        search: 'input.sessionDrainTimeoutMs ?? SESSION_DRAIN_TIMEOUT_MS',
        replace: 'input.sessionDrainTimeoutMs || SESSION_DRAIN_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'zero-session-step-bound-read-as-default',
    breaks: 'every session step is bounded as configured (0 is a bound)',
    file: SERVER,
    edits: [
      {
        search: 'input.sessionStepTimeoutMs ?? SESSION_STEP_TIMEOUT_MS',
        replace: 'input.sessionStepTimeoutMs || SESSION_STEP_TIMEOUT_MS',
      },
    ],
  },
  {
    name: 'server-drain-default-of-a-session',
    breaks: 'the server’s drain (10 s by default) is longer than a session’s own bounds, so they end first',
    file: SERVER,
    edits: [
      {
        search: 'export const DEFAULT_SERVER_DRAIN_TIMEOUT_MS = 10_000;',
        replace: 'export const DEFAULT_SERVER_DRAIN_TIMEOUT_MS = 5000;',
      },
    ],
  },
  {
    name: 'idle-bound-from-start',
    breaks: 'the idle timer runs while no session is live, afresh each time the last session leaves',
    file: SERVER,
    edits: [
      { search: IDLE_AFTER, replace: '' },
      {
        search: "      initial: 'idle',\n",
        replace:
          "      initial: 'idle',\n      after: {\n        idleTimeout: {\n          guard: 'hasNoSessions',\n          target: '#sharedServer.closingTransport',\n          actions: ['recordIdle', 'announceShutdown'],\n        },\n      },\n",
      },
    ],
  },
  {
    name: 'server-escalation-named-by-the-latest',
    breaks: 'shutdown() says which signal hurried the sessions first',
    file: SERVER,
    edits: [
      {
        search: 'escalatedBy: ({ context, event }) => context.escalatedBy ?? describe(event as ServerTrigger),',
        replace: 'escalatedBy: ({ event }) => describe(event as ServerTrigger),',
      },
    ],
  },
  {
    name: 'signal-while-disposing-hurries',
    breaks: 'a signal hurries the sessions until the store’s disposal (after the last session) began',
    file: SERVER,
    edits: [
      {
        search:
          "          actions: { type: 'recordStepTimeout', params: { step: 'disposeStore' } },\n        },\n      },\n    },\n",
        replace:
          "          actions: { type: 'recordStepTimeout', params: { step: 'disposeStore' } },\n        },\n      },\n      on: {\n        'signal.received': { actions: ['recordEscalation', 'announceEscalation', 'hurrySessions'] },\n      },\n    },\n",
      },
    ],
  },
  {
    name: 'server-exit-code-of-the-latest-signal',
    breaks: 'an earlier non-zero code is kept: the code set when teardown began, not a later one',
    file: SERVER,
    edits: [
      {
        search: 'escalatedBy: ({ context, event }) => context.escalatedBy ?? describe(event as ServerTrigger),\n',
        replace:
          'escalatedBy: ({ context, event }) => context.escalatedBy ?? describe(event as ServerTrigger),\n      priorExitCode: ({ event }) => normalizeExitCode((event as ServerTrigger).exitCode),\n',
      },
    ],
  },
  // ---- the session -------------------------------------------------------------------------
  {
    name: 'socket-close-after-half-close-ignored',
    breaks: 'once ending, a socket that closes (nobody reads the replies) aborts the handlers',
    file: SESSION,
    edits: [
      {
        search: "isLateClose: ({ context }) => context.trigger !== 'connection.closed',",
        replace: "isLateClose: ({ context }) => context.trigger === 'server.closing',",
      },
    ],
  },
  {
    name: 'transport-close-aborts-an-ending-session',
    breaks: 'once ending, anything but a socket close or the server hurrying is the same ending',
    file: SESSION,
    edits: [
      {
        search:
          "      on: {\n        'connection.closed': {\n          guard: 'isLateClose',\n          target: 'releasing',",
        replace:
          "      on: {\n        'transport.closed': {\n          target: 'releasing',\n          actions: ['recordEscalation', 'abortHandlers', 'recordDrainCutShort'],\n        },\n        'connection.closed': {\n          guard: 'isLateClose',\n          target: 'releasing',",
      },
    ],
  },
];
