import type { Log } from '../../log.js';

/** What a shell reports for a command stopped by Ctrl-C (128 + SIGINT), and what qmd exits with then. */
export const EXIT_INTERRUPTED = 130;

/** The part of `process` this uses: a fake in tests. */
export interface SignalSource {
  on(event: 'SIGINT', listener: () => void): unknown;
  off(event: 'SIGINT', listener: () => void): unknown;
}

export interface InterruptOptions {
  /** Where the one acknowledging line goes (the progress bar's log, so the bar is cleared first). */
  log: Log;
  /** What is finished before stopping, for that line: `chunk`, `batch of files`. */
  unit: string;
  source?: SignalSource;
  /** How the second Ctrl-C leaves. Default `process.exit`. */
  exit?: (code: number) => void;
  /** Runs just before that exit (`collection add` removes an index it made and never wrote to). */
  onQuit?: () => void;
  /**
   * Stops whatever draws on the terminal (the progress bar, a download's bar) before the quit
   * line, so that line is the last thing on the screen: a bar redrawn after it would be left
   * there by the exit.
   */
  endOutput?: () => void;
}

/**
 * Ctrl-C for a long command (`embed`, `update`, `collection add`), so that stopping one never
 * throws away the minutes of work already done. The first SIGINT
 * fires `stop`: the work ends after its current unit, commits, and the command says what it
 * kept and exits 130. The second exits 130 at once; the index is consistent all the same,
 * since every unit is its own transaction (an uncommitted one is rolled back on the next open).
 *
 * The listener stays for the life of the process, after the work too. Without one, Node's
 * default kills the process by SIGINT; and `signal-exit` (loaded by node-llama-cpp's `ora`)
 * re-raises a SIGINT that no other listener handles, which is how the first Ctrl-C used to end
 * `qmd embed` by the signal 10 times out of 10 (`process.once` had removed the listener).
 */
export interface Interrupt {
  /** Fires at the first Ctrl-C. */
  readonly stop: AbortSignal;
  /** Ctrl-C was pressed: the command exits 130 after saying what it kept. */
  readonly interrupted: boolean;
  /**
   * The work is over: first one turn of the event loop, so a Ctrl-C that came during its last
   * synchronous stretch (the commit) is heard now and `interrupted` tells; from then on a
   * Ctrl-C exits 130 at once, with nothing left to stop. Without that turn a SIGINT pending
   * when nothing ref'd is left is dropped, and the process exits 0 (Node's signal watchers
   * are unref'd; bench/experiments/interrupt/pending-signal.mjs: never heard, 3 of 3).
   */
  finish(): Promise<void>;
  /**
   * Called once the index is closed: if Ctrl-C was pressed, exits 130 now. Left to end by
   * itself, Node closes its signal watchers during its own teardown (llama.cpp's takes a
   * while), and a SIGINT then meets the default action: a second Ctrl-C typed right after the
   * command's last line killed it by the signal (seen in test/e2e/interrupt.test.ts).
   */
  leaveIfInterrupted(): void;
  /** Removes the listener (tests; a command never does, see above). */
  dispose(): void;
}

export function onInterrupt(options: InterruptOptions): Interrupt {
  const source = options.source ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const controller = new AbortController();
  let presses = 0;
  let working = true;
  const listener = (): void => {
    presses++;
    if (presses === 1 && working) {
      options.log.line(`Stopping after the current ${options.unit} (Ctrl-C again to quit at once)...`);
      controller.abort();
      return;
    }
    try {
      options.endOutput?.();
      options.log.line('Quitting at once; the index keeps everything committed before now.');
      options.onQuit?.();
    } finally {
      exit(EXIT_INTERRUPTED);
    }
  };
  source.on('SIGINT', listener);
  return {
    stop: controller.signal,
    get interrupted() {
      return presses > 0;
    },
    async finish() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      working = false;
    },
    leaveIfInterrupted() {
      if (presses > 0) exit(EXIT_INTERRUPTED);
    },
    dispose() {
      source.off('SIGINT', listener);
    },
  };
}
