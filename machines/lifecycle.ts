/**
 * The lifecycle of `qmd mcp`: one explicit machine owns every way the server can end.
 *
 * connected → closingTransport → draining → disposingStore → done, with failedStep routing a
 * failed or timed-out step on to the next one. The contract is `docs/design.md`.
 *
 * Design choice: the machine keeps `invoke` and `after`. The two teardown steps are
 * invoked promise actors (`closeTransport`, `disposeStore`) and every bound is a named delay
 * (`stepTimeout`, `drainTimeout`), so XState owns the timing rules: a step that answers after
 * its bound is ignored because leaving the state stops its actor and cancels its timer, with
 * no bookkeeping in the host, and Stately draws what really happens. The host gives the actor
 * its one injected clock, so tests replay generated paths with a simulated clock. The price:
 * `createTestModel` refuses the machine, so `test/model/` replays `getShortestPaths` and
 * `getSimplePaths` itself.
 *
 * Escalation: once teardown has begun, the host has detached stdin and the parent watch (they
 * can only start teardown), and `transport.closed` is heard only while connected (afterwards
 * the transport closes because teardown closed it), so the later triggers that can arrive are
 * signals, a stdout error and the HTTP listener closing; `isEscalation` (machines/triggers.ts)
 * decides whether one is a new departure ("hurry up") or the same one. A programmatic shutdown never escalates.
 *
 * The index's watcher (docs/design.md §2.1, "The watcher"): its writes are work in flight, as tool
 * handlers are (`watch.write.started` / `watch.write.settled`, counted in every state apart from
 * the handlers: `writes`), so `draining` waits for a write the watcher began before the client
 * left, within the drain deadline. An escalation or the deadline rolls it back (`abortWrites`)
 * before `disposingStore`. The host stops the watcher hearing changes as `closeTransport` begins
 * and closes it in `disposeStore`, before the store: the machine only counts and decides.
 *
 * Every effect is a named stub below; `src/lifecycle/host.ts` provides the real ones with
 * `machine.provide(...)`. This file imports only `xstate` and opens in Stately as it is, so
 * the config is written out literally (no spreads, no computed keys).
 */
import { assign, fromPromise, setup } from 'xstate';
import {
  computeExitCode,
  type DrainOutcome,
  type FailedStep,
  normalizeExitCode,
  stepFailure,
  stepTimeout,
  teardownWords,
} from './teardown.js';
import { describeTrigger, isEscalation, type TriggerEvent } from './triggers.js';

export type TeardownStep = 'closeTransport' | 'disposeStore';

export interface LifecycleContext {
  /**
   * Tool handlers running now, as the host reports them. The machine counts `handler.started`
   * and `handler.settled` in every state it receives them; the host sends them from the
   * trigger on (which hands over the gate's count) or, when a trace or inspector observes,
   * from the start: while connected nothing reads the count, and two actor events per tool
   * call would be most of the lifecycle's cost per call (docs/design.md §2.1).
   */
  inflight: number;
  /**
   * Index writes of the watcher running now (`watch.write.started` / `watch.write.settled`,
   * counted in every state and always sent: a write is one per batch of changed notes, not
   * one per call). `draining` waits for them as for handlers.
   */
  writes: number;
  /** The trigger that started teardown. */
  trigger: TriggerEvent | null;
  /** The breadcrumb's words for it, e.g. `stdin closed`, `SIGTERM`. */
  reason: string | null;
  /** `process.exitCode` as it was when teardown began. */
  priorExitCode: number;
  failedSteps: FailedStep<TeardownStep>[];
  drain: DrainOutcome | null;
  /** The breadcrumb words of the first escalating trigger, if any. */
  escalatedBy: string | null;
  drainTimeoutMs: number;
  stepTimeoutMs: number;
}

/** The watcher began writing a batch to the index, or that write committed or rolled back. */
export type WatchWriteEvent = { type: 'watch.write.started' } | { type: 'watch.write.settled' };

export type LifecycleEvent = TriggerEvent | { type: 'handler.started' } | { type: 'handler.settled' } | WatchWriteEvent;

export interface LifecycleInput {
  /** How long `draining` waits for in-flight handlers (default 5000 ms). */
  drainTimeoutMs?: number;
  /** The bound of each teardown step; a step that takes longer has failed (default 2000 ms). */
  stepTimeoutMs?: number;
}

export interface LifecycleOutput {
  /** 0 after a clean teardown, 1 if a step failed; an earlier non-zero code is kept. */
  exitCode: number;
  reason: string;
  failedSteps: FailedStep<TeardownStep>[];
  drain: DrainOutcome;
  escalatedBy: string | null;
  /** One line for logs, e.g. `stdin closed: drained, all steps ok, exit 0`. */
  summary: string;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 5000;
export const DEFAULT_STEP_TIMEOUT_MS = 2000;

/** The output at `done`, which is reached only after a trigger (reason set) and the drain (drain set). */
function summarize(context: LifecycleContext): LifecycleOutput {
  const exitCode = computeExitCode(context);
  const reason = context.reason!;
  const drain = context.drain!;
  return {
    exitCode,
    reason,
    failedSteps: context.failedSteps,
    drain,
    escalatedBy: context.escalatedBy,
    summary: `${reason}: ${teardownWords(drain, context.failedSteps)}, exit ${exitCode}`,
  };
}

export const lifecycleMachine = setup({
  // Stryker disable next-line ObjectLiteral: type-only; XState reads nothing from `types` at runtime
  types: {
    context: {} as LifecycleContext,
    events: {} as LifecycleEvent,
    input: {} as LifecycleInput,
    output: {} as LifecycleOutput,
  },
  actors: {
    closeTransport: fromPromise<void>(async () => {
      throw new Error('closeTransport is provided by the host');
    }),
    disposeStore: fromPromise<void>(async () => {
      throw new Error('disposeStore is provided by the host');
    }),
  },
  delays: {
    drainTimeout: ({ context }) => context.drainTimeoutMs,
    stepTimeout: ({ context }) => context.stepTimeoutMs,
  },
  guards: {
    // Only trigger transitions (stdout.closed, signal.received, http.closed) use this guard.
    isEscalation: ({ context, event }) => isEscalation(context.trigger, event as TriggerEvent),
    // Nothing in flight: no handler and no index write of the watcher.
    isIdle: ({ context }) => context.inflight === 0 && context.writes === 0,
    wasEscalated: ({ context }) => context.escalatedBy !== null,
    // failedStep is entered only after a failure was recorded, so there is a last one.
    failedWhileClosingTransport: ({ context }) => context.failedSteps.at(-1)!.step === 'closeTransport',
  },
  actions: {
    recordTrigger: assign(({ context, event }) => {
      const trigger = event as TriggerEvent;
      return {
        trigger,
        reason: describeTrigger(trigger),
        priorExitCode: normalizeExitCode(trigger.exitCode),
        // A host may count handlers itself while connected and hand the count over here.
        inflight: trigger.inflight ?? context.inflight,
      };
    }),
    recordEscalation: assign({
      escalatedBy: ({ context, event }) => context.escalatedBy ?? describeTrigger(event as TriggerEvent),
    }),
    countStarted: assign({ inflight: ({ context }) => context.inflight + 1 }),
    countSettled: assign({ inflight: ({ context }) => Math.max(0, context.inflight - 1) }),
    countWriteStarted: assign({ writes: ({ context }) => context.writes + 1 }),
    // A write the host heard settle without its start (subscribed mid-write) never goes below 0.
    countWriteSettled: assign({ writes: ({ context }) => Math.max(0, context.writes - 1) }),
    recordDrained: assign({ drain: 'idle' as const }),
    recordDrainDeadline: assign({ drain: 'deadline' as const }),
    recordDrainCutShort: assign({ drain: 'cutShort' as const }),
    recordStepFailure: assign({
      failedSteps: ({ context, event }, params: { step: TeardownStep }) => [
        ...context.failedSteps,
        stepFailure(params.step, event),
      ],
    }),
    recordStepTimeout: assign({
      failedSteps: ({ context }, params: { step: TeardownStep }) => [
        ...context.failedSteps,
        stepTimeout(params.step, context.stepTimeoutMs),
      ],
    }),
    // Effects the host provides (src/lifecycle/host.ts). Stubs here keep the machine pure.
    announceShutdown: () => {},
    detachTriggerSources: () => {},
    announceEscalation: () => {},
    abortHandlers: () => {},
    abortWrites: () => {},
    warnDrainDeadline: () => {},
    warnStepFailed: () => {},
  },
}).createMachine({
  id: 'lifecycle',
  initial: 'connected',
  context: ({ input }) => ({
    inflight: 0,
    writes: 0,
    trigger: null,
    reason: null,
    priorExitCode: 0,
    failedSteps: [],
    drain: null,
    escalatedBy: null,
    drainTimeoutMs: input.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    stepTimeoutMs: input.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
  }),
  on: {
    'handler.started': { actions: 'countStarted' },
    'handler.settled': { actions: 'countSettled' },
    'watch.write.started': { actions: 'countWriteStarted' },
    'watch.write.settled': { actions: 'countWriteSettled' },
  },
  states: {
    connected: {
      description: 'Serving the client. Any trigger starts the one teardown.',
      on: {
        'stdin.end': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'stdin.close': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'stdout.closed': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'transport.closed': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'signal.received': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'parent.gone': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'http.closed': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
        'shutdown.requested': {
          target: 'closingTransport',
          actions: ['recordTrigger', 'announceShutdown', 'detachTriggerSources'],
        },
      },
    },
    closingTransport: {
      description:
        'Stop dispatching new requests (server.close()) and stop the watcher hearing changes, bounded by stepTimeout.',
      invoke: {
        id: 'closeTransport',
        src: 'closeTransport',
        onDone: { target: 'draining' },
        onError: {
          target: 'failedStep',
          actions: { type: 'recordStepFailure', params: { step: 'closeTransport' } },
        },
      },
      after: {
        stepTimeout: {
          target: 'failedStep',
          actions: { type: 'recordStepTimeout', params: { step: 'closeTransport' } },
        },
      },
      on: {
        'stdout.closed': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
        'signal.received': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
        'http.closed': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
      },
    },
    draining: {
      description:
        "Wait for in-flight handlers and the watcher's index write, bounded by drainTimeout; a second trigger cuts it short.",
      always: [
        { guard: 'wasEscalated', target: 'disposingStore', actions: 'recordDrainCutShort' },
        { guard: 'isIdle', target: 'disposingStore', actions: 'recordDrained' },
      ],
      after: {
        drainTimeout: {
          target: 'disposingStore',
          actions: ['recordDrainDeadline', 'warnDrainDeadline', 'abortWrites'],
        },
      },
      on: {
        'stdout.closed': {
          guard: 'isEscalation',
          target: 'disposingStore',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites', 'recordDrainCutShort'],
        },
        'signal.received': {
          guard: 'isEscalation',
          target: 'disposingStore',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites', 'recordDrainCutShort'],
        },
        'http.closed': {
          guard: 'isEscalation',
          target: 'disposingStore',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites', 'recordDrainCutShort'],
        },
      },
    },
    disposingStore: {
      description:
        'Close the watcher, then store.close(): the LLM first (it waits for running native calls), then the database.',
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
      on: {
        'stdout.closed': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
        'signal.received': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
        'http.closed': {
          guard: 'isEscalation',
          actions: ['recordEscalation', 'announceEscalation', 'abortHandlers', 'abortWrites'],
        },
      },
    },
    failedStep: {
      description: 'A step failed or timed out: warn, remember it (exit code 1), go on to the next step.',
      entry: 'warnStepFailed',
      always: [{ guard: 'failedWhileClosingTransport', target: 'draining' }, { target: 'done' }],
    },
    done: {
      type: 'final',
      description: 'Teardown complete: the host sets the exit code and arms the watchdog.',
    },
  },
  output: ({ context }) => summarize(context),
});

export type LifecycleMachine = typeof lifecycleMachine;
