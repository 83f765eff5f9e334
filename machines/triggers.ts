/**
 * The shutdown triggers the lifecycle machine understands, and the two pure rules it needs
 * about them: what a trigger is called in the breadcrumb, and whether a later trigger is
 * the same departure as the first one or an escalation.
 *
 * Pure: no I/O, nothing but types and string logic (see `docs/design.md` §2.1).
 */

/** Signals that end the server. Each one goes through the machine; none calls `process.exit()`. */
export type ShutdownSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/**
 * The host stamps two facts on each trigger, so the machine stays pure: `exitCode`, the
 * `process.exitCode` already set when the trigger arrived (an earlier non-zero code is kept),
 * and `inflight`, the handlers running at that moment, when the host has not been sending
 * `handler.started` / `handler.settled` while connected (see `recordTrigger`).
 */
export type TriggerEvent =
  | { type: 'stdin.end'; exitCode?: number; inflight?: number }
  | { type: 'stdin.close'; exitCode?: number; inflight?: number }
  | { type: 'stdout.closed'; exitCode?: number; inflight?: number; code?: string }
  | { type: 'transport.closed'; exitCode?: number; inflight?: number }
  | { type: 'signal.received'; signal: ShutdownSignal; exitCode?: number; inflight?: number }
  | { type: 'parent.gone'; exitCode?: number; inflight?: number }
  | { type: 'http.closed'; exitCode?: number; inflight?: number }
  | { type: 'shutdown.requested'; reason?: string; exitCode?: number; inflight?: number };

export type TriggerType = TriggerEvent['type'];

/**
 * The client's side of the pipes went away: one departure, however many of these arrive.
 * `transport.closed` is the MCP transport closing by itself while connected: SDK v2's stdio
 * transport notices stdin EOF and stdout errors on its own, so one departure reaches the host
 * twice, through our adapters and through the transport; neither may escalate the other.
 */
const PIPE_DEPARTURES: ReadonlySet<TriggerType> = new Set([
  'stdin.end',
  'stdin.close',
  'stdout.closed',
  'transport.closed',
]);

/** The words after `Shutting down (` in the breadcrumb; part of the CLI contract (§4). */
export function describeTrigger(event: TriggerEvent): string {
  switch (event.type) {
    case 'stdin.end':
    case 'stdin.close':
      return 'stdin closed';
    case 'stdout.closed':
      return 'stdout closed';
    case 'transport.closed':
      return 'transport closed';
    case 'signal.received':
      return event.signal;
    case 'parent.gone':
      return 'parent exited';
    case 'http.closed':
      return 'HTTP server stopped';
    case 'shutdown.requested':
      return event.reason ?? 'shutdown requested';
  }
}

/**
 * Whether `next`, arriving after teardown began with `first`, escalates ("hurry up").
 *
 * - A programmatic `shutdown()` never escalates: it is idempotent by contract.
 * - stdin `end`, stdin `close` and a stdout error are one departure of the client.
 * - A repeated signal escalates (a second Ctrl-C, the SDK client's SIGTERM after EOF).
 * - Any other trigger of another kind escalates; the same non-signal kind again does not.
 */
export function isEscalation(first: TriggerEvent | null, next: TriggerEvent): boolean {
  if (first === null || next.type === 'shutdown.requested') return false;
  if (PIPE_DEPARTURES.has(first.type) && PIPE_DEPARTURES.has(next.type)) return false;
  if (next.type === 'signal.received') return true;
  return next.type !== first.type;
}
