import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import type WebSocket from 'ws';
import type { InspectionEvent } from 'xstate';
import { type Clock, realClock, type TimerHandle } from '../lifecycle/clock.js';
import type { Log } from '../log.js';
import { openInspectorSocket } from './inspect-socket.js';

export interface InspectObserverOptions {
  /** Messages kept while the socket connects; later ones are dropped (default 200). */
  maxPending?: number;
  /** Once open, a message is dropped while more than this many bytes wait to be sent (default 1 MiB). */
  maxBufferedBytes?: number;
  /** How long `stop()` lets queued messages flush before it drops the connection (default 1000 ms, unref'd). */
  flushMs?: number;
  clock?: Clock;
  /** Sent as the `x-qmd-pid` header so `qmd lifecycle inspect` can tell processes apart. */
  pid?: number;
}

export type InspectObserverState = 'connecting' | 'open' | 'closed' | 'failed';

export interface InspectObserver {
  /** Pass to the host's `inspect` list. Never throws, never blocks. */
  observe(event: InspectionEvent): void;
  /** Flushes what is queued (bounded by `flushMs`) and closes the socket; idempotent. */
  stop(): void;
  state(): InspectObserverState;
}

/** A machine snapshot's status once the actor has finished. */
const FINAL_STATUSES = new Set(['done', 'error', 'stopped']);

/**
 * `QMD_INSPECT=ws://HOST:PORT`: streams the lifecycle actor's events and snapshots to a
 * Stately inspector (`qmd lifecycle inspect`, or `@statelyai/inspect/server`) as Stately's own
 * inspection events, built by `@statelyai/inspect` 0.7.2's `createInspector` with this adapter.
 *
 * Why not `createWebSocketInspector`: measured with 0.7.2, when nothing listens it retries every
 * 5 s forever on a ref'd timer, keeps the process alive, and `stop()` does not cancel it. Here:
 * - the socket is unref'd (`inspect-socket.ts`) and the only timer is unref'd: inspection never
 *   keeps qmd alive and never delays its exit;
 * - one connection attempt; a failure is one `QMD Warning:` on stderr and later events are dropped;
 * - while connecting, at most `maxPending` messages wait (the first ones: the actor's
 *   registration, which carries the machine definition, must reach the inspector first);
 * - once the root actor's final snapshot is sent, the socket is closed by itself;
 * - nothing is ever written to stdout (`qmd mcp` speaks JSON-RPC there).
 */
export function createInspectObserver(url: string, log: Log, options: InspectObserverOptions = {}): InspectObserver {
  const maxPending = options.maxPending ?? 200;
  const maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
  const flushMs = options.flushMs ?? 1000;
  const clock = options.clock ?? realClock;
  let state: InspectObserverState = 'connecting';
  let stopped = false;
  let finishing = false;
  let warned = false;
  let dropped = 0;
  let unsent = 0;
  let flushTimer: TimerHandle | undefined;
  const pending: string[] = [];

  const warnOnce = (text: string): void => {
    if (warned) return;
    warned = true;
    log.warn(text);
  };

  let ws: WebSocket | undefined;
  try {
    ws = openInspectorSocket(url, { 'x-qmd-pid': String(options.pid ?? process.pid) });
  } catch (error) {
    state = 'failed';
    warnOnce(`the Stately inspector URL ${url} is not usable (${(error as Error).message}); inspection is off`);
  }

  const terminate = (): void => {
    if (flushTimer !== undefined) clock.clearTimeout(flushTimer);
    flushTimer = undefined;
    if (state === 'connecting' || state === 'open') state = 'closed';
    ws?.terminate();
  };

  let slowWarned = false;
  const send = (data: string): void => {
    if (!ws) return;
    if (ws.bufferedAmount > maxBufferedBytes) {
      if (!slowWarned) log.warn(`the Stately inspector at ${url} is not keeping up; dropping inspection events`);
      slowWarned = true;
      return;
    }
    unsent++;
    ws.send(data, () => {
      unsent--;
      if (stopped && unsent === 0) terminate();
    });
  };

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    pending.length = 0;
    if (state !== 'open' || unsent === 0) {
      terminate();
      return;
    }
    // Queued messages get a bounded moment to reach the kernel; the timer is unref'd, so it
    // fires only while something else holds the loop (the pending writes themselves).
    flushTimer = clock.setTimeout(terminate, flushMs, { unref: true });
  };

  if (ws) {
    ws.on('open', () => {
      if (stopped) return;
      state = 'open';
      for (const data of pending.splice(0)) send(data);
      if (dropped > 0) log.warn(`${dropped} inspection event(s) dropped while connecting to ${url}`);
      dropped = 0;
      if (finishing) stop();
    });
    ws.on('error', (error) => {
      if (stopped) return;
      const failedToConnect = state === 'connecting';
      state = failedToConnect ? 'failed' : 'closed';
      pending.length = 0;
      warnOnce(
        failedToConnect
          ? `cannot reach the Stately inspector at ${url} (${error.message}); inspection events are dropped`
          : `the Stately inspector at ${url} failed (${error.message}); inspection events are dropped`,
      );
    });
    ws.on('close', () => {
      if (!stopped && state === 'open')
        warnOnce(`the Stately inspector at ${url} went away; inspection events are dropped`);
      if (state === 'open' || state === 'connecting') state = 'closed';
    });
  }

  // `createInspector`'s adapter: 0.7.2 does not export the `Adapter` type, only its shape.
  const adapter = {
    send(message: StatelyInspectionEvent): void {
      if (stopped || state === 'failed' || state === 'closed') return;
      const data = serialize(message);
      if (data === undefined) return;
      if (state === 'connecting') {
        if (pending.length < maxPending) pending.push(data);
        else dropped++;
      } else send(data);
      if (isRootFinal(message) && !finishing) {
        // The actor is finished: only its children's last snapshots may follow, already queued
        // on the library's zero-delay timers; this one runs after them (timers of equal delay
        // fire in order). Still connecting, the queue is flushed on open and then it stops; the
        // unref'd socket holds nothing meanwhile.
        finishing = true;
        if (state === 'open') setTimeout(stop, 0).unref();
      }
    },
  };
  // 0.7.2 converts each event on a `setTimeout(0)` (its Node fallback for requestIdleCallback):
  // a ref'd zero-delay timer per event, in order, so events still queued at `done` go out.
  const inspector = createInspector(adapter);

  return {
    observe(event) {
      if (stopped || state === 'failed' || state === 'closed') return;
      try {
        inspector.inspect.next?.(event);
      } catch {
        // Inspection must never break the lifecycle.
      }
    },
    stop,
    state: () => state,
  };
}

function isRootFinal(message: StatelyInspectionEvent): boolean {
  if (message.type !== '@xstate.snapshot' || message.sessionId !== message.rootId) return false;
  const status = (message.snapshot as { status?: string } | undefined)?.status;
  return status !== undefined && FINAL_STATUSES.has(status);
}

/**
 * JSON that survives what events carry: an `Error` (a failed step's `xstate.error.actor.*`
 * event) keeps its name and message instead of becoming `{}`, a cycle becomes `[Circular]`,
 * a BigInt a string. `undefined` if it still cannot be serialised.
 */
export function serialize(value: unknown): string | undefined {
  // The objects that contain the one being visited: a value among them is a cycle; the same
  // object met again elsewhere (not an ancestor) is serialised again, as JSON would.
  const ancestors: unknown[] = [];
  try {
    return JSON.stringify(value, function (this: unknown, _key: string, v: unknown) {
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Error) return { name: v.name, message: v.message };
      if (v === null || typeof v !== 'object') return v;
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(v)) return '[Circular]';
      ancestors.push(v);
      return v;
    });
  } catch {
    return undefined;
  }
}
