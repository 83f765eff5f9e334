import {
  type Actor,
  type AnyStateMachine,
  createActor,
  type EventFromLogic,
  type InputFrom,
  type OutputFrom,
  type SnapshotFrom,
  type StateValue,
} from 'xstate';
import { normalizeExitCode } from '../../machines/teardown.js';
import { errorMessage } from '../errors.js';
import { createLog, type Log } from '../log.js';
import { type Clock, realClock } from './clock.js';
import { createExitPolicy, type ExitPolicy, inspectOption } from './exit-policy.js';
import type { HostOptions } from './host-options.js';
import { announceHostedActor } from './hosted-actors.js';
import { watchSignals } from './signals.js';
import { createTraceWriter, stateName } from './trace.js';

/** What the skeleton hands a host while it builds its machine's effects. */
export interface HostKit {
  clock: Clock;
  log: Log;
  policy: ExitPolicy;
  /** A trace or an inspector watches: a live view wants every event from the start. */
  observed: boolean;
  /** Sends an event to the machine while it runs (dropped once it is done). */
  send(event: EventFromLogic<AnyStateMachine>): void;
}

/** What a host gives the skeleton: its machine, effects provided, and what only it knows. */
export interface HostedMachine<M extends AnyStateMachine> {
  /** The machine with this host's effects (`machine.provide(...)`). */
  machine: M;
  input: InputFrom<M>;
  /** Trace lines name the actor (`sharedServer`, `session-3`): for a machine with children. */
  traceActors?: boolean;
  /** Facts stamped on each trigger beside the exit code already set (the lifecycle: the gate's count). */
  stamp?: () => object;
  /** The output when the machine itself fails (only a throwing effect can: a custom log or clock). */
  failedOutput(snapshot: SnapshotFrom<M>): OutputFrom<M>;
  /** Its name in that warning, e.g. `the lifecycle machine`. */
  name: string;
  /** Runs once, just before the exit policy's `finish` (detach what only starts teardown). */
  beforeFinish?: () => void;
}

/**
 * The skeleton both hosts share (the lifecycle's `host.ts`, the shared server's
 * `shared-host.ts`): the exit policy, the `done` promise, the trace and inspector, `finish`
 * with a fallback output should the machine fail, the signals, and the one `shutdown()`. Each
 * host builds its machine's effects from the kit (`build`) and adds its own sources at
 * `start()`. docs/design.md §3.
 */
export function hostMachine<M extends AnyStateMachine>(
  options: HostOptions,
  build: (kit: HostKit) => HostedMachine<M>,
) {
  const clock = options.clock ?? realClock;
  const log = options.log ?? createLog(process.stderr);
  const policy = createExitPolicy({ ...options, clock, log });
  const startedAt = clock.now();
  let resolveDone!: (output: OutputFrom<M>) => void;
  const done = new Promise<OutputFrom<M>>((resolve) => {
    resolveDone = resolve;
  });

  // Every send goes through here: the actor is created after `build`, which may capture `send`.
  let actor!: Actor<M>;
  // Every state machine's snapshot has these; XState's generic `SnapshotFrom<M>` does not say so.
  const snapshot = () => actor.getSnapshot() as { status: string; output?: OutputFrom<M>; value: StateValue };
  const send = (event: EventFromLogic<M>): void => {
    if (snapshot().status === 'active') actor.send(event);
  };

  let tracer: ReturnType<typeof createTraceWriter> | undefined;
  const observers = [...(options.inspect ?? [])];
  const kit: HostKit = {
    clock,
    log,
    policy,
    observed: observers.length > 0 || Boolean(options.traceFile),
    send: (event) => send(event as EventFromLogic<M>),
  };
  const hosted = build(kit);
  if (options.traceFile) {
    const actorName = hosted.traceActors ? hosted.machine.id : undefined;
    tracer = createTraceWriter(options.traceFile, clock, log, { actorName, startedAt });
    observers.unshift(tracer.observe);
  }
  actor = createActor(hosted.machine, {
    input: hosted.input,
    clock,
    // Only when someone observes (see `inspectOption`).
    ...inspectOption(observers),
  } as never) as Actor<M>;
  announceHostedActor(actor, clock);

  // Both machines hear `signal.received` and `shutdown.requested` from here; the lifecycle's
  // host sends its own triggers (stdin, stdout, the parent, the HTTP listener) through it too.
  const trigger = (event: { type: string; [fact: string]: unknown }): void =>
    send({ ...event, exitCode: normalizeExitCode(policy.slot.get()), ...hosted.stamp?.() } as EventFromLogic<M>);

  // Called once: the actor either completes or errors, never both.
  const finish = (output: OutputFrom<M>): void => {
    hosted.beforeFinish?.();
    policy.finish(output as { exitCode: number; summary: string });
    tracer?.close();
    resolveDone(output);
  };
  actor.subscribe({
    complete: () => finish(snapshot().output!),
    error: (error) => {
      log.warn(`${hosted.name} failed: ${errorMessage(error)}`);
      finish(hosted.failedOutput(actor.getSnapshot()));
    },
  });

  let started = false;
  let shutdownPromise: Promise<OutputFrom<M>> | undefined;
  return {
    actor,
    done,
    clock,
    log,
    send,
    /** Sends a trigger stamped with the exit code already set (and the host's `stamp`). */
    trigger,
    /** Starts the actor and hears signals; false if it had already started. */
    start(): boolean {
      if (started) return false;
      started = true;
      actor.start();
      const signals = options.signals === undefined ? process : options.signals;
      if (signals) {
        // Signal listeners stay for the life of the process: a second signal escalates, and
        // after `done` (native objects disposed) a signal means "now", with the computed code.
        watchSignals(signals, (signal) => {
          if (policy.finished) policy.exitNow();
          else trigger({ type: 'signal.received', signal });
        });
      }
      return true;
    },
    /** Starts teardown if nothing has (idempotent): one shared promise that never rejects. */
    shutdown(reason?: string): Promise<OutputFrom<M>> {
      shutdownPromise ??= (() => {
        trigger({ type: 'shutdown.requested', reason });
        return done;
      })();
      return shutdownPromise;
    },
    /** The state value as one dotted name, e.g. `connected`, `connected.idle`. */
    state: () => stateName(snapshot().value),
  };
}
