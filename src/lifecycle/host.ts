import { type Actor, fromPromise } from 'xstate';
import { type LifecycleMachine, type LifecycleOutput, lifecycleMachine } from '../../machines/lifecycle.js';
import { describeTrigger, type TriggerEvent } from '../../machines/triggers.js';
import type { ExitCodeSlot } from './exit-policy.js';
import { createInflightGate, type InflightGate } from './gate.js';
import type { HostOptions } from './host-options.js';
import { hostMachine } from './machine-host.js';
import { watchParent } from './parent.js';
import { type StdinSource, stdinAlreadyGone, watchStdin } from './stdin.js';
import { guardStdout, type StdoutSink } from './stdout.js';
import { createWatcherOwner, type OwnedWatcher, type WatcherOwner } from './watcher.js';

/** The two teardown steps: the composition root hands them over when it starts the lifecycle. */
export interface TeardownSteps {
  /** Step 1: stop dispatching requests (`server.close()`). Its signal fires if the step's bound passes. */
  closeTransport: (signal: AbortSignal) => Promise<void> | void;
  /** Step 2: `store.close()` (the LLM first, then the database). */
  disposeStore: (signal: AbortSignal) => Promise<void> | void;
}

export type { ExitCodeSlot, OwnedWatcher };

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
  /**
   * Gives the index's watcher to the teardown (docs/design.md §2.1): its writes are work in
   * flight the drain waits for, it stops hearing changes when `closeTransport` begins and is
   * closed in `disposeStore` before the store; given once teardown has begun, it is closed at once.
   */
  ownWatcher(watcher: OwnedWatcher): void;
  readonly actor: Actor<LifecycleMachine>;
}

/**
 * Hosts the lifecycle machine on the skeleton both hosts share (`machine-host.ts`: exit policy,
 * trace, signals, `shutdown()`): provides its effects and turns stdin, stdout and the parent
 * into events. All I/O comes in through `options` and defaults to `process.*`. Nothing listens until `start(steps)`, so a composition root reads
 * top to bottom: create the lifecycle, build the server with its gate, connect the transport,
 * then start the lifecycle with the teardown steps that close what was just built.
 */
export function createLifecycle(options: LifecycleOptions): Lifecycle & { start(steps: TeardownSteps): void } {
  // Sources that only start teardown (stdin, the parent watch) are detached when it starts;
  // signals and the stdout guard stay for the life of the process, because a second signal
  // escalates and a late EPIPE must not crash us.
  const triggerSources: Array<() => void> = [];
  // Given at `start()`; the actors look them up when invoked.
  let steps: TeardownSteps | undefined;
  let gate!: InflightGate;
  let watchers!: WatcherOwner;

  const host = hostMachine(options, ({ log, policy, observed, send }) => {
    // While connected nothing in the machine reads the in-flight count, and two actor events per
    // tool call were most of the lifecycle's cost per call (docs/design.md §2.1). So the gate
    // alone counts until teardown starts, the trigger carries its count into the machine, and
    // from then on every handler.started / handler.settled goes to the actor. With an observer
    // attached (a trace, the Stately inspector) they go from the start, so a live view shows it.
    let forwardHandlerEvents = observed;
    gate = createInflightGate({
      onStarted: () => {
        if (forwardHandlerEvents) send({ type: 'handler.started' });
      },
      onSettled: () => {
        if (forwardHandlerEvents) send({ type: 'handler.settled' });
      },
    });
    // Sent always, observed or not: one write per batch of changed notes costs nothing per call.
    watchers = createWatcherOwner(send);
    const machine = lifecycleMachine.provide({
      actors: {
        closeTransport: fromPromise(async ({ signal }) => {
          watchers.stopHearing();
          await steps!.closeTransport(signal);
        }),
        disposeStore: fromPromise(async ({ signal }) => {
          // The watcher first: it shares the store's model and connection (§2.1).
          const watcherFailed = watchers.size > 0 ? await watchers.closed(signal) : undefined;
          await steps!.disposeStore(signal);
          if (watcherFailed) throw watcherFailed;
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
          log.warn(
            `${by} during teardown (${context.reason}): aborting ${context.inflight} in-flight handler(s)${writesWords(context.writes)}`,
          );
        },
        abortHandlers: ({ event }) => {
          gate.abortAll(new Error(`aborted: ${describeTrigger(event as TriggerEvent)} escalated the shutdown`));
        },
        abortWrites: ({ event }) => {
          const why = event.type.startsWith('xstate.after.')
            ? 'the drain deadline passed'
            : `${describeTrigger(event as TriggerEvent)} escalated the shutdown`;
          watchers.abortWrites(new Error(`rolled back: ${why}`));
        },
        warnDrainDeadline: ({ context }) => {
          log.warn(
            `drain deadline of ${context.drainTimeoutMs} ms passed with ${context.inflight} handler(s)${writesWords(context.writes)} in flight; disposing the store`,
          );
        },
        warnStepFailed: ({ context }) => {
          // failedStep is entered only after a failure was recorded.
          const failure = context.failedSteps.at(-1)!;
          log.warn(`teardown step ${failure.step} failed: ${failure.error}; continuing`);
        },
      },
    });
    return {
      machine,
      name: 'the lifecycle machine',
      // The machine applies the defaults (DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_STEP_TIMEOUT_MS).
      input: { drainTimeoutMs: options.drainTimeoutMs, stepTimeoutMs: options.stepTimeoutMs },
      stamp: () => ({ inflight: gate.size }),
      beforeFinish: () => {
        for (const detach of triggerSources.splice(0)) detach();
        // A machine that failed ran no teardown: its watcher is stopped here all the same, the
        // write in hand rolled back (after a teardown it was closed before the store).
        if (host.actor.getSnapshot().status === 'error') {
          watchers.abortWrites(new Error('rolled back: the lifecycle machine failed'));
          watchers.stopHearing();
        }
        watchers.detach();
      },
      failedOutput: (snapshot) => ({
        exitCode: 1,
        reason: snapshot.context.reason ?? 'unknown',
        failedSteps: [],
        drain: 'idle',
        escalatedBy: null,
        summary: 'lifecycle error, exit 1',
      }),
    };
  });

  const trigger = (event: TriggerInput): void => host.trigger(event);
  const start = (given: TeardownSteps): void => {
    steps ??= given;
    if (!host.start()) return;
    const stdout = options.stdout === undefined ? process.stdout : options.stdout;
    if (stdout) guardStdout(stdout, trigger);
    const parent = options.parent === undefined ? { ppid: () => process.ppid } : options.parent;
    if (parent) triggerSources.push(watchParent({ ...parent, clock: host.clock }, trigger));
    const stdin = options.stdin === undefined ? process.stdin : options.stdin;
    if (stdin) {
      triggerSources.push(watchStdin(stdin, trigger));
      // Last, once every source is in place: a stdin that ended before we listened triggers now.
      const gone = stdinAlreadyGone(stdin);
      if (gone) trigger(gone);
    }
  };

  return {
    gate,
    done: host.done,
    actor: host.actor,
    start,
    trigger,
    state: host.state,
    shutdown: host.shutdown,
    ownWatcher: (watcher) => watchers.own(watcher),
  };
}

/** ` and 1 index write(s)` when the watcher has writes in flight; nothing otherwise (the lines stay as they were). */
function writesWords(writes: number): string {
  return writes > 0 ? ` and ${writes} index write(s)` : '';
}
