import { type Actor, type AnyActorRef, fromPromise } from 'xstate';
import type { SessionMachine, SessionTrigger } from '../../machines/session.js';
import { sessionMachine } from '../../machines/session.js';
import { type ServerOutput, sharedServerMachine } from '../../machines/shared-server.js';
import { teardownWords } from '../../machines/teardown.js';
import { createInflightGate, type InflightGate } from './gate.js';
import type { HostOptions } from './host-options.js';
import { hostMachine } from './machine-host.js';
import { createWatcherOwner, type OwnedWatcher } from './watcher.js';

/** The two steps of the server's own teardown; the composition root hands them over at `start()`. */
export interface ServerSteps {
  /** Stop accepting relays: close the listening socket. */
  closeListener: (signal: AbortSignal) => Promise<void> | void;
  /** `store.close()`, once, after every session is done. */
  disposeStore: (signal: AbortSignal) => Promise<void> | void;
}

/** What one session's teardown does, given when its connection opens. */
export interface SessionEffects {
  /** Stop dispatching: close this session's McpServer. */
  closeServer: (signal: AbortSignal) => Promise<void> | void;
  /** Release the session: close its socket. */
  releaseSession: (signal: AbortSignal) => Promise<void> | void;
  /** Remove the listeners that can only start this session's teardown. */
  detach?: () => void;
}

export interface OpenedSession {
  id: string;
  /** This session's handlers run through it; escalation aborts them. */
  gate: InflightGate;
  /** Why the session is ending, as its connection reports it. */
  trigger(event: SessionTrigger): void;
}

export interface SharedLifecycleOptions extends HostOptions {
  idleTimeoutMs?: number;
  sessionDrainTimeoutMs?: number;
  sessionStepTimeoutMs?: number;
}

export interface SharedLifecycle {
  start(steps: ServerSteps): void;
  /** A new relay: a session, or `null` once teardown has begun (close the connection then). */
  openSession(effects: SessionEffects): OpenedSession | null;
  /** Starts teardown if nothing has (idempotent); never rejects. */
  shutdown(reason?: string): Promise<ServerOutput>;
  readonly done: Promise<ServerOutput>;
  /** `connected.idle`, `connected.serving`, `draining`, … */
  state(): string;
  /** Sessions alive now: a session leaves this count when its machine is done, not when its socket closes. */
  sessions(): number;
  /** Sessions opened since the start. */
  opened(): number;
  /** The server's actor (its sessions are its children): for tests that watch the machine run. */
  readonly actor: AnyActorRef;
  /**
   * The server is being replaced (a newer qmd's relay asked): the composition root has stopped
   * taking connections; teardown starts, with `reason`, once no session is live (at once if
   * none is). Until then the live sessions are served as ever. Idempotent.
   */
  retire(reason: string): void;
  /** Whether `retire` was called. */
  readonly retired: boolean;
  /**
   * Gives the server's one watcher to its teardown (docs/design.md §2.2): it stops hearing
   * changes as `closeListener` begins; `disposeStore` rolls back a write still running and
   * closes it before the store. Its writes are not counted by this machine: the server's drain
   * is its sessions', during which a write goes on; given once teardown has begun, it is closed at once.
   */
  ownWatcher(watcher: OwnedWatcher): void;
}

/**
 * Hosts the shared server's machine and its sessions on the skeleton `host.ts` uses too
 * (`machine-host.ts`: exit policy, trace, signals, `shutdown()`): provides their effects and
 * opens a session per relay. Sessions are the machine's children; the
 * host keeps, per session id, the effects and the gate its connection was given.
 */
export function createSharedLifecycle(options: SharedLifecycleOptions = {}): SharedLifecycle {
  let steps: ServerSteps | undefined;
  const sessions = new Map<string, { effects: SessionEffects; gate: InflightGate }>();
  let nextId = 1;
  const sessionOf = (id: string) => sessions.get(id)!;
  const watchers = createWatcherOwner(() => {});

  const host = hostMachine(options, ({ log, policy }) => {
    const session = sessionMachine.provide({
      actors: {
        closeServer: fromPromise<void, { id: string }>(async ({ input, signal }) => {
          await sessionOf(input.id).effects.closeServer(signal);
        }),
        releaseSession: fromPromise<void, { id: string }>(async ({ input, signal }) => {
          await sessionOf(input.id).effects.releaseSession(signal);
        }),
      },
      actions: {
        announceEnding: ({ context }) => log.line(`session ${context.id} ending (${context.trigger})`),
        detachTriggerSources: ({ context }) => sessionOf(context.id).effects.detach?.(),
        abortHandlers: ({ context }) =>
          sessionOf(context.id).gate.abortAll(new Error('aborted: the session ended under its handlers')),
        warnDrainDeadline: ({ context }) =>
          log.warn(
            `session ${context.id}: drain deadline of ${context.drainTimeoutMs} ms passed with ${context.inflight} handler(s) in flight`,
          ),
        warnStepFailed: ({ context }) => {
          const failure = context.failedSteps.at(-1)!;
          log.warn(`session ${context.id}: teardown step ${failure.step} failed: ${failure.error}; continuing`);
        },
        announceDone: ({ context }) =>
          log.line(`session ${context.id} done: ${teardownWords(context.drain, context.failedSteps)}`),
      },
    });

    const machine = sharedServerMachine.provide({
      actors: {
        session,
        closeListener: fromPromise(async ({ signal }) => {
          watchers.stopHearing();
          await steps!.closeListener(signal);
        }),
        disposeStore: fromPromise(async ({ signal }) => {
          // Every session is done: a write still running has no reader left to wait for.
          watchers.abortWrites(new Error('rolled back: the shared server is closing its store'));
          const watcherFailed = watchers.size > 0 ? await watchers.closed(signal) : undefined;
          await steps!.disposeStore(signal);
          if (watcherFailed) throw watcherFailed;
        }),
      },
      actions: {
        announceShutdown: ({ context }) => {
          policy.beginTeardown();
          log.line(`Shutting down (${context.reason})...`);
        },
        announceEscalation: ({ context, event }) => {
          const by = (event as { signal?: string }).signal ?? 'a signal';
          log.warn(`${by} during teardown (${context.reason}): hurrying ${context.sessions.length} session(s)`);
        },
        warnDrainDeadline: ({ context }) =>
          log.warn(
            `drain deadline of ${context.drainTimeoutMs} ms passed with ${context.sessions.length} session(s) still ending; hurrying them`,
          ),
        warnStepFailed: ({ context }) => {
          const failure = context.failedSteps.at(-1)!;
          log.warn(`teardown step ${failure.step} failed: ${failure.error}; continuing`);
        },
      },
    });
    return {
      machine,
      name: "the shared server's machine",
      traceActors: true,
      input: {
        idleTimeoutMs: options.idleTimeoutMs,
        drainTimeoutMs: options.drainTimeoutMs,
        stepTimeoutMs: options.stepTimeoutMs,
        sessionDrainTimeoutMs: options.sessionDrainTimeoutMs,
        sessionStepTimeoutMs: options.sessionStepTimeoutMs,
        readExitCode: () => policy.slot.get(),
      },
      // A machine that failed ran no teardown: its watcher is stopped here all the same.
      beforeFinish: () => {
        if (host.actor.getSnapshot().status !== 'error') return;
        watchers.abortWrites(new Error("rolled back: the shared server's machine failed"));
        watchers.stopHearing();
      },
      failedOutput: (snapshot) => ({
        exitCode: 1,
        reason: snapshot.context.reason ?? 'unknown',
        sessions: snapshot.context.opened,
        drain: 'idle',
        failedSteps: [],
        escalatedBy: null,
        summary: 'machine error, exit 1',
      }),
    };
  });
  const { actor } = host;

  const child = (id: string): AnyActorRef | undefined =>
    (actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)[id];
  const sendToSession = (id: string, event: Parameters<Actor<SessionMachine>['send']>[0]): void => {
    const ref = child(id);
    if (ref && ref.getSnapshot().status === 'active') ref.send(event);
  };

  let retiredFor: string | undefined;
  const leaveIfIdle = (): void => {
    if (retiredFor === undefined) return;
    const snapshot = actor.getSnapshot();
    // Only `connected` has substates: a server already tearing down needs no push.
    if (snapshot.status === 'active' && typeof snapshot.value !== 'string' && snapshot.context.sessions.length === 0)
      void host.shutdown(retiredFor);
  };

  return {
    done: host.done,
    actor,
    retire(reason) {
      if (retiredFor !== undefined) return;
      retiredFor = reason;
      actor.subscribe(leaveIfIdle);
      leaveIfIdle();
    },
    get retired() {
      return retiredFor !== undefined;
    },
    start(given) {
      steps ??= given;
      host.start();
    },
    openSession(effects) {
      // Only `connected` has substates: any other value means teardown has begun.
      const snapshot = actor.getSnapshot();
      if (snapshot.status !== 'active' || typeof snapshot.value === 'string') return null;
      const id = `session-${nextId++}`;
      const gate = createInflightGate({
        onStarted: () => sendToSession(id, { type: 'handler.started' }),
        onSettled: () => sendToSession(id, { type: 'handler.settled' }),
      });
      sessions.set(id, { effects, gate });
      actor.send({ type: 'session.opened', id });
      const ref = child(id);
      if (!ref) {
        sessions.delete(id);
        return null;
      }
      // Forgotten once done: a server that lives for weeks must not keep every session's effects.
      ref.subscribe({ complete: () => sessions.delete(id), error: () => sessions.delete(id) });
      return { id, gate, trigger: (event) => sendToSession(id, event) };
    },
    shutdown: host.shutdown,
    state: host.state,
    ownWatcher: (watcher) => watchers.own(watcher),
    sessions: () => actor.getSnapshot().context.sessions.length,
    opened: () => actor.getSnapshot().context.opened,
  };
}
