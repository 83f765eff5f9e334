import { type Actor, createActor, fromPromise } from 'xstate';
import { type LifecycleMachine, type LifecycleOutput, lifecycleMachine } from '../../machines/lifecycle.js';
import { normalizeExitCode } from '../../machines/teardown.js';
import { describeTrigger, type TriggerEvent } from '../../machines/triggers.js';
import { errorMessage } from '../errors.js';
import { createLog } from '../log.js';
import { realClock } from './clock.js';
import { createExitPolicy, type ExitCodeSlot, inspectOption } from './exit-policy.js';
import { createInflightGate, type InflightGate } from './gate.js';
import type { HostOptions } from './host-options.js';
import { watchParent } from './parent.js';
import { watchSignals } from './signals.js';
import { type StdinSource, stdinAlreadyGone, watchStdin } from './stdin.js';
import { guardStdout, type StdoutSink } from './stdout.js';
import { createTraceWriter } from './trace.js';

/** The two teardown steps: the composition root hands them over when it starts the lifecycle. */
export interface TeardownSteps {
  /** Step 1: stop dispatching requests (`server.close()`). Its signal fires if the step's bound passes. */
  closeTransport: (signal: AbortSignal) => Promise<void> | void;
  /** Step 2: `store.close()` (the LLM first, then the database). */
  disposeStore: (signal: AbortSignal) => Promise<void> | void;
}

export type { ExitCodeSlot };

export interface LifecycleOptions extends HostOptions {
  /** The client's end of the conversation; `null` when stdin is not a client (HTTP mode). */
  stdin?: StdinSource | null;
  /** Where replies go: its EPIPE means the client left; `null` when stdout is not the protocol. */
  stdout?: StdoutSink | null;
  /** Watch for reparenting; `null` when the parent is meant to leave (a daemon). */
  parent?: { ppid: () => number; intervalMs?: number; original?: number } | null;
}

type TriggerInput = TriggerEvent extends infer E
  ? E extends TriggerEvent
    ? Omit<E, 'exitCode' | 'inflight'>
    : never
  : never;

export interface Lifecycle {
  /** Every tool handler runs through it. */
  readonly gate: InflightGate;
  /** Settles with the machine's output once teardown is complete. Never rejects. */
  readonly done: Promise<LifecycleOutput>;
  /** Starts teardown if nothing has (idempotent): one shared promise that never rejects. */
  shutdown(reason?: string): Promise<LifecycleOutput>;
  /** Sends a trigger, stamped with the exit code already set (the HTTP adapter uses it). */
  trigger(event: TriggerInput): void;
  /** The state value now, e.g. `connected`. */
  state(): string;
  readonly actor: Actor<LifecycleMachine>;
}

/**
 * Hosts the lifecycle machine: provides its effects, turns stdin, stdout, signals and the
 * parent into events, and applies the exit policy. All I/O comes in through `options` and
 * defaults to `process.*`. Nothing listens until `start(steps)`, so a composition root reads
 * top to bottom: create the lifecycle, build the server with its gate, connect the transport,
 * then start the lifecycle with the teardown steps that close what was just built.
 */
export function createLifecycle(options: LifecycleOptions): Lifecycle & { start(steps: TeardownSteps): void } {
  const clock = options.clock ?? realClock;
  const log = options.log ?? createLog(process.stderr);
  const policy = createExitPolicy({ ...options, clock, log });
  const exitSlot = policy.slot;
  const startedAt = clock.now();
  let resolveDone!: (output: LifecycleOutput) => void;
  const done = new Promise<LifecycleOutput>((resolve) => {
    resolveDone = resolve;
  });

  // Sources that only start teardown (stdin, the parent watch) are detached when it starts;
  // signals and the stdout guard stay for the life of the process, because a second signal
  // escalates and a late EPIPE must not crash us.
  const triggerSources: Array<() => void> = [];

  const send = (event: Parameters<Actor<LifecycleMachine>['send']>[0]): void => {
    if (actor.getSnapshot().status === 'active') actor.send(event);
  };
  const trigger = (event: TriggerInput): void => {
    send({ ...event, exitCode: normalizeExitCode(exitSlot.get()), inflight: gate.size } as TriggerEvent);
  };

  // While connected nothing in the machine reads the in-flight count, and two actor events per
  // tool call were most of the lifecycle's cost per call (bench `tool-call`). So the gate alone
  // counts until teardown starts, the trigger carries its count into the machine, and from then
  // on every handler.started / handler.settled goes to the actor. With an observer attached (a
  // trace, the Stately inspector) they go from the start, so a live view shows the count.
  const tracer = options.traceFile ? createTraceWriter(options.traceFile, clock, log, startedAt) : undefined;
  const observers = [...(tracer ? [tracer.observe] : []), ...(options.inspect ?? [])];
  const observed = observers.length > 0;
  let forwardHandlerEvents = observed;
  const gate = createInflightGate({
    onStarted: () => {
      if (forwardHandlerEvents) send({ type: 'handler.started' });
    },
    onSettled: () => {
      if (forwardHandlerEvents) send({ type: 'handler.settled' });
    },
  });

  // Given at `start()`; the actors look them up when invoked.
  let steps: TeardownSteps | undefined;
  const machine = lifecycleMachine.provide({
    actors: {
      closeTransport: fromPromise(async ({ signal }) => {
        await steps!.closeTransport(signal);
      }),
      disposeStore: fromPromise(async ({ signal }) => {
        await steps!.disposeStore(signal);
      }),
    },
    actions: {
      announceShutdown: ({ context }) => {
        forwardHandlerEvents = true;
        policy.beginTeardown();
        log.line(`Shutting down (${context.reason})...`);
      },
      detachTriggerSources: () => {
        for (const detach of triggerSources.splice(0)) detach();
      },
      announceEscalation: ({ context, event }) => {
        const by = describeTrigger(event as TriggerEvent);
        log.warn(`${by} during teardown (${context.reason}): aborting ${context.inflight} in-flight handler(s)`);
      },
      abortHandlers: ({ event }) => {
        gate.abortAll(new Error(`aborted: ${describeTrigger(event as TriggerEvent)} escalated the shutdown`));
      },
      warnDrainDeadline: ({ context }) => {
        log.warn(
          `drain deadline of ${context.drainTimeoutMs} ms passed with ${context.inflight} handler(s) in flight; disposing the store`,
        );
      },
      warnStepFailed: ({ context }) => {
        // failedStep is entered only after a failure was recorded.
        const failure = context.failedSteps.at(-1)!;
        log.warn(`teardown step ${failure.step} failed: ${failure.error}; continuing`);
      },
    },
  });

  const actor = createActor(machine, {
    // The machine applies the defaults (DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_STEP_TIMEOUT_MS).
    input: { drainTimeoutMs: options.drainTimeoutMs, stepTimeoutMs: options.stepTimeoutMs },
    clock,
    // Only when someone observes (see `inspectOption`): an observed lifecycle gets two events per tool call.
    ...inspectOption(observers),
  });

  // Called once: the actor either completes or errors, never both.
  const finish = (output: LifecycleOutput): void => {
    for (const detach of triggerSources.splice(0)) detach();
    policy.finish(output);
    tracer?.close();
    resolveDone(output);
  };

  actor.subscribe({
    complete: () => finish(actor.getSnapshot().output!),
    // Only a throwing effect gets here (a custom log or clock): teardown cannot continue.
    error: (error) => {
      log.warn(`the lifecycle machine failed: ${errorMessage(error)}`);
      finish({
        exitCode: 1,
        reason: actor.getSnapshot().context.reason ?? 'unknown',
        failedSteps: [],
        drain: 'idle',
        escalatedBy: null,
        summary: 'lifecycle error, exit 1',
      });
    },
  });
  let started = false;
  const start = (given: TeardownSteps): void => {
    if (started) return;
    steps = given;
    started = true;
    actor.start();

    const signals = options.signals === undefined ? process : options.signals;
    if (signals) {
      watchSignals(signals, (signal) => {
        // After `done` native objects are disposed: a signal then means "now", and that is safe.
        if (policy.finished) policy.exitNow();
        else trigger({ type: 'signal.received', signal });
      });
    }
    const stdout = options.stdout === undefined ? process.stdout : options.stdout;
    if (stdout) guardStdout(stdout, (event) => trigger(event));
    const parent = options.parent === undefined ? { ppid: () => process.ppid } : options.parent;
    if (parent) {
      triggerSources.push(watchParent({ ...parent, clock }, trigger));
    }
    const stdin = options.stdin === undefined ? process.stdin : options.stdin;
    if (stdin) {
      triggerSources.push(watchStdin(stdin, trigger));
      // Last, once every source is in place: a stdin that ended before we listened triggers now.
      const gone = stdinAlreadyGone(stdin);
      if (gone) trigger(gone);
    }
  };

  let shutdownPromise: Promise<LifecycleOutput> | undefined;
  return {
    gate,
    done,
    actor,
    start,
    trigger,
    state: () => String(actor.getSnapshot().value),
    shutdown(reason) {
      shutdownPromise ??= (() => {
        trigger({ type: 'shutdown.requested', reason });
        return done;
      })();
      return shutdownPromise;
    },
  };
}
