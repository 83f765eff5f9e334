/**
 * The shared server of `qmd mcp --shared`: one process per index, one store and one model for
 * every client, each client a session (`machines/session.ts`) spawned as a child of this
 * machine. Its own lifecycle goes through the lifecycle's six states:
 *
 * connected (idle ⇄ serving) → closingTransport (stop accepting, tell every session to end) →
 * draining (until every session is done; a second signal or the drain deadline hurries them) →
 * disposingStore (the LLM, then the database: once, after the last session) → done, with
 * failedStep routing a failed or timed-out step on to the next one.
 *
 * Triggers: a signal (SIGTERM, SIGINT, SIGHUP; `qmd mcp stop --shared` sends SIGTERM), a
 * programmatic shutdown, or being idle: no session for `idleTimeout`, so the last client
 * leaving is followed by a clean exit within that bound. The invariant the tests check: the
 * store is disposed exactly once, and only after every session is done.
 *
 * The drain has no way past a live session: sessions are bounded by their own timers (each
 * step and their drain), so waiting for them ends; the deadline here hurries them instead
 * (`server.escalated`: abort handlers, cut their drains short).
 *
 * Imports only `xstate` and the session machine; effects are named stubs the host provides.
 */
import { assign, enqueueActions, fromPromise, setup, spawnChild } from 'xstate';
import { SESSION_DRAIN_TIMEOUT_MS, SESSION_STEP_TIMEOUT_MS, type SessionOutput, sessionMachine } from './session.js';
import {
  computeExitCode,
  type DrainOutcome,
  type FailedStep,
  normalizeExitCode,
  stepFailure,
  stepTimeout,
  teardownWords,
} from './teardown.js';
import type { ShutdownSignal } from './triggers.js';

export type ServerTrigger =
  | { type: 'signal.received'; signal: ShutdownSignal; exitCode?: number }
  | { type: 'shutdown.requested'; reason?: string; exitCode?: number };

/** A session's end arrives as XState's done event for the child, with its output. */
export type SessionDoneEvent = { type: `xstate.done.actor.session-${string}`; output: SessionOutput };

export type ServerEvent = ServerTrigger | { type: 'session.opened'; id: string } | SessionDoneEvent;

export type ServerStep = 'closeListener' | 'disposeStore';

export interface ServerInput {
  idleTimeoutMs?: number;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  /** Passed to every session. */
  sessionDrainTimeoutMs?: number;
  sessionStepTimeoutMs?: number;
  /**
   * Reads the exit code already set (`process.exitCode`), when the idle bound passes: the one
   * trigger no event carries, so the host cannot stamp it as it does on a signal or a
   * shutdown(). An earlier non-zero code is kept, as on every other trigger.
   */
  readExitCode?: () => unknown;
}

export interface ServerContext {
  /** Live sessions, by the id each was spawned under. */
  sessions: string[];
  /** Sessions opened since start, done ones included. */
  opened: number;
  reason: string | null;
  /** The kind of trigger that started teardown. */
  triggerType: ServerTrigger['type'] | null;
  priorExitCode: number;
  failedSteps: FailedStep<ServerStep>[];
  drain: DrainOutcome | null;
  escalatedBy: string | null;
  idleTimeoutMs: number;
  drainTimeoutMs: number;
  stepTimeoutMs: number;
  sessionDrainTimeoutMs: number;
  sessionStepTimeoutMs: number;
  readExitCode: () => unknown;
}

export interface ServerOutput {
  exitCode: number;
  reason: string;
  sessions: number;
  drain: DrainOutcome;
  failedSteps: FailedStep<ServerStep>[];
  escalatedBy: string | null;
  summary: string;
}

/** 60 s: a client that reloads within a minute finds the model warm; an abandoned one is gone. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Longer than a session's own bounds (2 s step + 5 s drain + 2 s step), so they end first. */
export const DEFAULT_SERVER_DRAIN_TIMEOUT_MS = 10_000;
export const DEFAULT_SERVER_STEP_TIMEOUT_MS = 2000;

function describe(trigger: ServerTrigger): string {
  return trigger.type === 'signal.received' ? trigger.signal : (trigger.reason ?? 'shutdown requested');
}

/**
 * An action that sends `type` to every live session (`endSessions`, `hurrySessions`). Built
 * outside `setup()` and cast where it enters the action map: an `enqueueActions` written in
 * the map makes TypeScript lose the whole setup's inference (XState 5.33).
 */
function tellSessions(type: 'server.closing' | 'server.escalated'): never {
  return enqueueActions(
    ({
      context,
      enqueue,
    }: {
      context: ServerContext;
      enqueue: { sendTo: (to: string, e: { type: string }) => void };
    }) => {
      for (const id of context.sessions) enqueue.sendTo(id, { type });
    },
  ) as never;
}

export const sharedServerMachine = setup({
  // Stryker disable next-line ObjectLiteral: type-only; XState reads nothing from `types` at runtime
  types: {
    context: {} as ServerContext,
    events: {} as ServerEvent,
    input: {} as ServerInput,
    output: {} as ServerOutput,
  },
  actors: {
    session: sessionMachine,
    closeListener: fromPromise<void>(async () => {
      throw new Error('closeListener is provided by the host');
    }),
    disposeStore: fromPromise<void>(async () => {
      throw new Error('disposeStore is provided by the host');
    }),
  },
  delays: {
    idleTimeout: ({ context }) => context.idleTimeoutMs,
    drainTimeout: ({ context }) => context.drainTimeoutMs,
    stepTimeout: ({ context }) => context.stepTimeoutMs,
  },
  guards: {
    hasNoSessions: ({ context }) => context.sessions.length === 0,
    // The done event of a spawned session carries its output; an invoked step's has none.
    isSessionDone: ({ event }) =>
      typeof (event as unknown as { output?: { session?: unknown } }).output?.session === 'string',
    failedWhileClosingListener: ({ context }) => context.failedSteps.at(-1)!.step === 'closeListener',
  },
  actions: {
    spawnSession: spawnChild('session', {
      id: ({ event }) => (event as { id: string }).id,
      input: ({ context, event }) => ({
        id: (event as { id: string }).id,
        drainTimeoutMs: context.sessionDrainTimeoutMs,
        stepTimeoutMs: context.sessionStepTimeoutMs,
      }),
    }),
    addSession: assign({
      sessions: ({ context, event }) => [...context.sessions, (event as { id: string }).id],
      opened: ({ context }) => context.opened + 1,
    }),
    removeSession: assign({
      sessions: ({ context, event }) =>
        context.sessions.filter((id) => id !== (event as unknown as { output: SessionOutput }).output.session),
    }),
    recordTrigger: assign(({ event }) => {
      const trigger = event as ServerTrigger;
      return {
        reason: describe(trigger),
        triggerType: trigger.type,
        priorExitCode: normalizeExitCode(trigger.exitCode),
      };
    }),
    recordIdle: assign(({ context }) => ({
      reason: `idle for ${context.idleTimeoutMs} ms`,
      triggerType: 'shutdown.requested' as const,
      priorExitCode: normalizeExitCode(context.readExitCode()),
    })),
    endSessions: tellSessions('server.closing'),
    hurrySessions: tellSessions('server.escalated'),
    recordEscalation: assign({
      escalatedBy: ({ context, event }) => context.escalatedBy ?? describe(event as ServerTrigger),
    }),
    recordDrained: assign({ drain: ({ context }) => context.drain ?? ('idle' as const) }),
    recordDrainDeadline: assign({ drain: 'deadline' as const }),
    recordDrainCutShort: assign({ drain: 'cutShort' as const }),
    recordStepFailure: assign({
      failedSteps: ({ context, event }, params: { step: ServerStep }) => [
        ...context.failedSteps,
        stepFailure(params.step, event),
      ],
    }),
    recordStepTimeout: assign({
      failedSteps: ({ context }, params: { step: ServerStep }) => [
        ...context.failedSteps,
        stepTimeout(params.step, context.stepTimeoutMs),
      ],
    }),
    // Effects the host provides. Stubs here keep the machine pure.
    announceShutdown: () => {},
    announceEscalation: () => {},
    warnDrainDeadline: () => {},
    warnStepFailed: () => {},
  },
}).createMachine({
  id: 'sharedServer',
  initial: 'connected',
  context: ({ input }) => ({
    sessions: [],
    opened: 0,
    reason: null,
    triggerType: null,
    priorExitCode: 0,
    failedSteps: [],
    drain: null,
    escalatedBy: null,
    idleTimeoutMs: input.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    drainTimeoutMs: input.drainTimeoutMs ?? DEFAULT_SERVER_DRAIN_TIMEOUT_MS,
    stepTimeoutMs: input.stepTimeoutMs ?? DEFAULT_SERVER_STEP_TIMEOUT_MS,
    sessionDrainTimeoutMs: input.sessionDrainTimeoutMs ?? SESSION_DRAIN_TIMEOUT_MS,
    sessionStepTimeoutMs: input.sessionStepTimeoutMs ?? SESSION_STEP_TIMEOUT_MS,
    readExitCode: input.readExitCode ?? (() => undefined),
  }),
  on: {
    // A session that ends, whatever the server is doing, is forgotten.
    'xstate.done.actor.*': { guard: 'isSessionDone', actions: 'removeSession' },
  },
  states: {
    connected: {
      description: 'Accepting relays. Idle with no session: the idle bound ends the server.',
      initial: 'idle',
      on: {
        'session.opened': { target: '.serving', actions: ['addSession', 'spawnSession'] },
        'signal.received': { target: 'closingTransport', actions: ['recordTrigger', 'announceShutdown'] },
        'shutdown.requested': { target: 'closingTransport', actions: ['recordTrigger', 'announceShutdown'] },
      },
      states: {
        idle: {
          description: 'No session: the idle timer runs from here, afresh each time the last one leaves.',
          after: {
            idleTimeout: { target: '#sharedServer.closingTransport', actions: ['recordIdle', 'announceShutdown'] },
          },
        },
        serving: {
          description: 'At least one session.',
          always: { guard: 'hasNoSessions', target: 'idle' },
        },
      },
    },
    closingTransport: {
      description: 'Stop accepting relays, and tell every session to end (each runs its own teardown).',
      entry: 'endSessions',
      invoke: {
        id: 'closeListener',
        src: 'closeListener',
        onDone: { target: 'draining' },
        onError: {
          target: 'failedStep',
          actions: { type: 'recordStepFailure', params: { step: 'closeListener' } },
        },
      },
      after: {
        stepTimeout: {
          target: 'failedStep',
          actions: { type: 'recordStepTimeout', params: { step: 'closeListener' } },
        },
      },
      on: {
        // Once teardown has begun, every signal is "hurry up" (a programmatic shutdown is not).
        'signal.received': {
          actions: ['recordEscalation', 'announceEscalation', 'hurrySessions'],
        },
      },
    },
    draining: {
      description: 'Wait until every session is done; the deadline or a second signal hurries them.',
      always: [{ guard: 'hasNoSessions', target: 'disposingStore', actions: 'recordDrained' }],
      after: {
        drainTimeout: { actions: ['recordDrainDeadline', 'warnDrainDeadline', 'hurrySessions'] },
      },
      on: {
        'signal.received': {
          actions: ['recordEscalation', 'announceEscalation', 'hurrySessions', 'recordDrainCutShort'],
        },
      },
    },
    disposingStore: {
      description: 'store.close(): the LLM first (it waits for running native calls), then the database. Once.',
      invoke: {
        id: 'disposeStore',
        src: 'disposeStore',
        onDone: { target: 'done' },
        onError: {
          target: 'failedStep',
          actions: { type: 'recordStepFailure', params: { step: 'disposeStore' } },
        },
      },
      after: {
        stepTimeout: {
          target: 'failedStep',
          actions: { type: 'recordStepTimeout', params: { step: 'disposeStore' } },
        },
      },
    },
    failedStep: {
      description: 'A step failed or timed out: warn, remember it (exit code 1), go on to the next step.',
      entry: 'warnStepFailed',
      always: [{ guard: 'failedWhileClosingListener', target: 'draining' }, { target: 'done' }],
    },
    done: {
      type: 'final',
      description: 'Teardown complete: the host sets the exit code and arms the watchdog.',
    },
  },
  output: ({ context }) => {
    const exitCode = computeExitCode(context);
    // done is reached only after a trigger (reason set) and the drain (drain set).
    const drain = context.drain!;
    const reason = context.reason!;
    return {
      exitCode,
      reason,
      sessions: context.opened,
      drain,
      failedSteps: context.failedSteps,
      escalatedBy: context.escalatedBy,
      summary: `${reason}: ${context.opened} session(s) served, ${teardownWords(drain, context.failedSteps)}, exit ${exitCode}`,
    };
  },
});

export type SharedServerMachine = typeof sharedServerMachine;
