import type { InspectionEvent } from 'xstate';
import type { Log } from '../log.js';
import type { Clock, TimerHandle } from './clock.js';
import { armWatchdog, DEFAULT_WATCHDOG_MS } from './watchdog.js';

/** Where the exit code lives: `process.exitCode` by default. */
export interface ExitCodeSlot {
  get(): unknown;
  set(code: number): void;
}

export const processExitCode: ExitCodeSlot = {
  get: () => process.exitCode,
  set: (code) => {
    process.exitCode = code;
  },
};

export interface ExitPolicyOptions {
  clock: Clock;
  log: Log;
  exitCode?: ExitCodeSlot;
  /** Called by the watchdog, and by a signal after `done`; never before. */
  exit?: (code: number) => void;
  watchdogMs?: number;
  activeResources?: () => string[];
  /**
   * Bytes of protocol output still unwritten (a client alive that stopped reading): at `done`
   * they are what holds the loop, and no one will take them, so the process exits at once
   * instead of waiting for the watchdog. Absent: nothing to check.
   */
  unwritten?: () => number;
  /**
   * Bytes the process's own stdout and stderr have not written yet (default: their
   * `writableLength`). Leaving at once (`leaveWhenOnlyStdio`) waits for these to be none.
   */
  pendingOutput?: () => number;
  /**
   * Runs `fn` once what `done` set going has run (default: `setImmediate`): the check whether
   * only stdio still holds the loop looks after the microtasks and I/O callbacks of this turn.
   */
  defer?: (fn: () => void) => void;
}

/** The handles stdin, stdout and stderr hold, as `process.getActiveResourcesInfo()` names them. */
const STDIO_RESOURCES = new Set(['PipeWrap', 'TTYWrap']);

/**
 * True when what holds the loop can only be the process's own stdio: one to three pipes or
 * terminals (stdin, stdout, stderr) and nothing else: no timer, socket, server, file request,
 * child or worker. A pipe of some other origin looks the same and would be cut too, as the
 * watchdog cuts it a second later; anything else keeps the wait and the watchdog, which names it.
 */
export function onlyStdioHolds(resources: readonly string[]): boolean {
  return resources.length > 0 && resources.length <= 3 && resources.every((r) => STDIO_RESOURCES.has(r));
}

const KEEP_ALIVE_MS = 2 ** 31 - 1;

/**
 * The exit policy both hosts apply (the lifecycle's and the shared server's): while teardown
 * runs, one ref'd timer keeps Node from exiting mid-teardown with the wrong code; at `done` the
 * exit code is set, one line says how it went, and an unref'd watchdog is armed that fires
 * only if something else still holds the loop (it names it, then exits with the code); when
 * protocol output a client never read is left (`unwritten`), it exits at once instead. When
 * only the process's own stdio is left holding the loop with nothing to write, it leaves at
 * once too: everything of ours is closed and disposed by then, and waiting for the loop to
 * empty would only add Node's own environment teardown (about 2 ms, a quarter of an idle exit:
 * docs/design.md §3, the host's exit). After `done` a signal means "now": native objects are
 * disposed, so a forced exit is safe then.
 */
export function createExitPolicy(options: ExitPolicyOptions) {
  const { clock, log } = options;
  const slot = options.exitCode ?? processExitCode;
  const exitProcess = options.exit ?? ((code: number) => process.exit(code));
  const activeResources = options.activeResources ?? (() => process.getActiveResourcesInfo());
  const pendingOutput = options.pendingOutput ?? (() => process.stdout.writableLength + process.stderr.writableLength);
  const defer = options.defer ?? ((fn: () => void) => void setImmediate(fn));
  let exited = false;
  const exit = (code: number): void => {
    if (exited) return;
    exited = true;
    exitProcess(code);
  };
  let keepAlive: TimerHandle | undefined;
  let teardownStartedAt = clock.now();
  let finishedCode: number | undefined;

  /** Leaves now if only stdio holds the loop and nothing is left to write; else the watchdog stays. */
  function leaveWhenOnlyStdio(code: number, disarmWatchdog: () => void): void {
    let resources: string[];
    try {
      resources = activeResources();
    } catch {
      return;
    }
    if (!onlyStdioHolds(resources) || pendingOutput() !== 0) return;
    disarmWatchdog();
    exit(code);
  }

  return {
    slot,
    /** Teardown began: hold the loop until `finish`. */
    beginTeardown(): void {
      teardownStartedAt = clock.now();
      keepAlive = clock.setTimeout(() => {}, KEEP_ALIVE_MS);
    },
    /** `done`: release the loop, set the code, say how it went, arm the watchdog. */
    finish(output: { exitCode: number; summary: string }): void {
      finishedCode = output.exitCode;
      clock.clearTimeout(keepAlive);
      slot.set(output.exitCode);
      const ms = Math.round((clock.now() - teardownStartedAt) * 10) / 10;
      log.line(`Shutdown complete in ${ms} ms: ${output.summary}`);
      if ((options.unwritten?.() ?? 0) > 0) {
        // The drain is over: replies a client never read would hold the exit until it read
        // them (the pending write is a live handle). Teardown is done, native objects are
        // disposed: leave now, after this turn (the trace and the log lines above still flush).
        clock.setTimeout(() => exit(output.exitCode), 0, { unref: true });
        return;
      }
      const disarm = armWatchdog({
        clock,
        log,
        ms: options.watchdogMs ?? DEFAULT_WATCHDOG_MS,
        exitCode: output.exitCode,
        activeResources,
        exit,
      });
      defer(() => leaveWhenOnlyStdio(output.exitCode, disarm));
    },
    /** True once `finish` ran: a signal then exits at once (`exitNow`). */
    get finished(): boolean {
      return finishedCode !== undefined;
    },
    exitNow(): void {
      if (finishedCode !== undefined) exit(finishedCode);
    },
  };
}

export type ExitPolicy = ReturnType<typeof createExitPolicy>;

/**
 * The actor's `inspect` option for these observers (a trace, the Stately inspector), or none.
 * Only when someone observes: an inspect callback, even an empty one, makes every event
 * dearer (docs/design.md §5, XState). An observer that throws never breaks the machine
 * (XState rethrows what an inspector throws).
 */
export function inspectOption(observers: ReadonlyArray<(event: InspectionEvent) => void>) {
  if (observers.length === 0) return {};
  return {
    inspect: (event: InspectionEvent) => {
      for (const observe of observers) {
        try {
          observe(event);
        } catch {
          // An observer must never break the lifecycle.
        }
      }
    },
  };
}
