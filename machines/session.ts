/**
 * One client's session inside the shared server (`qmd mcp --shared`): one relay connected over
 * a Unix socket, one `McpServer`, its own in-flight handlers. Spawned by the shared server's
 * machine (`machines/shared-server.ts`) for each connection; its end runs its own teardown and
 * the store, which every session shares, is left to the server.
 *
 * serving → closingServer (stop dispatching: close this session's McpServer) → draining (its
 * handlers, bounded; escalation cuts it short) → releasing (close the socket) → done, with
 * failedStep routing a failed or timed-out step on to the next one, as in the lifecycle.
 *
 * Why a session ends: the relay half-closes the socket as its own teardown begins
 * (`connection.ended`), the socket closes or fails under us (`connection.closed`: the relay was
 * killed, or gave up), the MCP transport closes itself (`transport.closed`), or the server is
 * shutting down (`server.closing`). Once ending, a socket that closes (nobody will read the
 * replies) or the server hurrying (`server.escalated`) aborts the handlers and cuts the drain
 * short; anything else is the same ending.
 *
 * Every effect is a named stub; the shared server's host provides them (`machine.provide`).
 * Imports only `xstate`; written out literally so it opens in Stately as it is.
 */
import { assign, fromPromise, setup } from 'xstate';
import { type DrainOutcome, type FailedStep, stepFailure, stepTimeout } from './teardown.js';

export type SessionTrigger =
  | { type: 'connection.ended' }
  | { type: 'connection.closed' }
  | { type: 'transport.closed' }
  | { type: 'server.closing' };

export type SessionEvent =
  | SessionTrigger
  | { type: 'server.escalated' }
  | { type: 'handler.started' }
  | { type: 'handler.settled' };

export type SessionStep = 'closeServer' | 'releaseSession';

export interface SessionInput {
  /** The id the server spawned it under, e.g. `session-3`. */
  id: string;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
}

export interface SessionContext {
  id: string;
  /** This session's handlers in flight, as the host reports them (see the lifecycle's `inflight`). */
  inflight: number;
  trigger: SessionTrigger['type'] | null;
  failedSteps: FailedStep<SessionStep>[];
  drain: DrainOutcome | null;
  escalated: boolean;
  drainTimeoutMs: number;
  stepTimeoutMs: number;
}

/** What the server gets back when the session is done (`xstate.done.actor.<id>`). */
export interface SessionOutput {
  session: string;
  trigger: SessionTrigger['type'];
  drain: DrainOutcome;
  failedSteps: FailedStep<SessionStep>[];
}

export const SESSION_DRAIN_TIMEOUT_MS = 5000;
export const SESSION_STEP_TIMEOUT_MS = 2000;

export const sessionMachine = setup({
  // Stryker disable next-line ObjectLiteral: type-only; XState reads nothing from `types` at runtime
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
    output: {} as SessionOutput,
  },
  actors: {
    closeServer: fromPromise<void, { id: string }>(async () => {
      throw new Error('closeServer is provided by the host');
    }),
    releaseSession: fromPromise<void, { id: string }>(async () => {
      throw new Error('releaseSession is provided by the host');
    }),
  },
  delays: {
    drainTimeout: ({ context }) => context.drainTimeoutMs,
    stepTimeout: ({ context }) => context.stepTimeoutMs,
  },
  guards: {
    // A socket that closes after the session began ending: the relay is gone, nobody reads.
    isLateClose: ({ context }) => context.trigger !== 'connection.closed',
    isIdle: ({ context }) => context.inflight === 0,
    wasEscalated: ({ context }) => context.escalated,
    failedWhileClosingServer: ({ context }) => context.failedSteps.at(-1)!.step === 'closeServer',
  },
  actions: {
    recordTrigger: assign({ trigger: ({ event }) => (event as SessionTrigger).type }),
    recordEscalation: assign({ escalated: true }),
    countStarted: assign({ inflight: ({ context }) => context.inflight + 1 }),
    countSettled: assign({ inflight: ({ context }) => Math.max(0, context.inflight - 1) }),
    recordDrained: assign({ drain: 'idle' as const }),
    recordDrainDeadline: assign({ drain: 'deadline' as const }),
    recordDrainCutShort: assign({ drain: 'cutShort' as const }),
    recordStepFailure: assign({
      failedSteps: ({ context, event }, params: { step: SessionStep }) => [
        ...context.failedSteps,
        stepFailure(params.step, event),
      ],
    }),
    recordStepTimeout: assign({
      failedSteps: ({ context }, params: { step: SessionStep }) => [
        ...context.failedSteps,
        stepTimeout(params.step, context.stepTimeoutMs),
      ],
    }),
    // Effects the host provides. Stubs here keep the machine pure.
    announceEnding: () => {},
    detachTriggerSources: () => {},
    abortHandlers: () => {},
    warnDrainDeadline: () => {},
    warnStepFailed: () => {},
    announceDone: () => {},
  },
}).createMachine({
  id: 'session',
  initial: 'serving',
  context: ({ input }) => ({
    id: input.id,
    inflight: 0,
    trigger: null,
    failedSteps: [],
    drain: null,
    escalated: false,
    drainTimeoutMs: input.drainTimeoutMs ?? SESSION_DRAIN_TIMEOUT_MS,
    stepTimeoutMs: input.stepTimeoutMs ?? SESSION_STEP_TIMEOUT_MS,
  }),
  on: {
    'handler.started': { actions: 'countStarted' },
    'handler.settled': { actions: 'countSettled' },
  },
  states: {
    serving: {
      description: 'One relay, one McpServer. Any ending starts this session’s teardown.',
      on: {
        'connection.ended': {
          target: 'closingServer',
          actions: ['recordTrigger', 'announceEnding', 'detachTriggerSources'],
        },
        'connection.closed': {
          target: 'closingServer',
          actions: ['recordTrigger', 'announceEnding', 'detachTriggerSources'],
        },
        'transport.closed': {
          target: 'closingServer',
          actions: ['recordTrigger', 'announceEnding', 'detachTriggerSources'],
        },
        'server.closing': {
          target: 'closingServer',
          actions: ['recordTrigger', 'announceEnding', 'detachTriggerSources'],
        },
      },
    },
    closingServer: {
      description: 'Stop dispatching: close this session’s McpServer (its handlers’ signals abort).',
      invoke: {
        id: 'closeServer',
        src: 'closeServer',
        input: ({ context }) => ({ id: context.id }),
        onDone: { target: 'draining' },
        onError: {
          target: 'failedStep',
          actions: { type: 'recordStepFailure', params: { step: 'closeServer' } },
        },
      },
      after: {
        stepTimeout: {
          target: 'failedStep',
          actions: { type: 'recordStepTimeout', params: { step: 'closeServer' } },
        },
      },
      on: {
        'connection.closed': { guard: 'isLateClose', actions: ['recordEscalation', 'abortHandlers'] },
        'server.escalated': { actions: ['recordEscalation', 'abortHandlers'] },
      },
    },
    draining: {
      description: 'Wait for this session’s handlers, bounded by drainTimeout; escalation cuts it short.',
      always: [
        { guard: 'wasEscalated', target: 'releasing', actions: 'recordDrainCutShort' },
        { guard: 'isIdle', target: 'releasing', actions: 'recordDrained' },
      ],
      after: {
        drainTimeout: { target: 'releasing', actions: ['recordDrainDeadline', 'warnDrainDeadline'] },
      },
      on: {
        'connection.closed': {
          guard: 'isLateClose',
          target: 'releasing',
          actions: ['recordEscalation', 'abortHandlers', 'recordDrainCutShort'],
        },
        'server.escalated': {
          target: 'releasing',
          actions: ['recordEscalation', 'abortHandlers', 'recordDrainCutShort'],
        },
      },
    },
    releasing: {
      description: 'Release the session: close its socket. The store stays: it is the server’s.',
      invoke: {
        id: 'releaseSession',
        src: 'releaseSession',
        input: ({ context }) => ({ id: context.id }),
        onDone: { target: 'done' },
        onError: {
          target: 'failedStep',
          actions: { type: 'recordStepFailure', params: { step: 'releaseSession' } },
        },
      },
      after: {
        stepTimeout: {
          target: 'failedStep',
          actions: { type: 'recordStepTimeout', params: { step: 'releaseSession' } },
        },
      },
      on: {
        // Still ending: a handler that outlived the drain deadline is aborted when the socket
        // closes (the release closes it) or the server hurries, as in the states before.
        'connection.closed': { guard: 'isLateClose', actions: ['recordEscalation', 'abortHandlers'] },
        'server.escalated': { actions: ['recordEscalation', 'abortHandlers'] },
      },
    },
    failedStep: {
      description: 'A step failed or timed out: warn, remember it, go on to the next step.',
      entry: 'warnStepFailed',
      always: [{ guard: 'failedWhileClosingServer', target: 'draining' }, { target: 'done' }],
    },
    done: {
      type: 'final',
      description: 'Session over: say how it went; the server learns it from the done event and forgets it.',
      entry: 'announceDone',
    },
  },
  output: ({ context }) => ({
    session: context.id,
    // done is reached only after a trigger and the drain.
    trigger: context.trigger!,
    drain: context.drain!,
    failedSteps: context.failedSteps,
  }),
});

export type SessionMachine = typeof sessionMachine;
