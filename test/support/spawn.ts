import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { BOUND_MS, Changes, type What, within } from './bounded.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A spawned child with its output collected, and waits for what it does: each is for an
 * observable event (output, an exit) and bounded, so a hang fails with the stderr so far.
 * The one way tests and benchmarks start a process and wait on it (where the SDK's client
 * spawns it instead, `sdk-session.ts` observes the child it made).
 */
export interface Spawned {
  child: ChildProcess;
  /** All of stdout so far (empty with `keepStdout: false`). */
  stdout(): string;
  /** All of stderr so far. */
  stderr(): string;
  /** At the `exit` event. Its stdout and stderr may still be arriving: see `closed`. */
  exited: Promise<Exit>;
  /** Once it has exited and its stdout and stderr have ended: the output is complete. */
  closed: Promise<Exit>;
  /**
   * `check()`'s first value other than `undefined`, tried now and whenever output arrives;
   * rejects if the output ends first (the process is gone) or after `ms`.
   */
  waitFor<T>(check: () => T | undefined, what: What, ms?: number): Promise<T>;
  /** Resolves when stderr contains `text` (or matches it). */
  waitForStderr(text: string | RegExp, ms?: number): Promise<void>;
  /** SIGKILLs the child if it still runs. Call in `finally`. */
  kill(): void;
}

export interface SpawnProcessOptions extends SpawnOptions {
  /** `false` leaves stdout to the caller (a client reading replies), and `stdout()` empty. */
  keepStdout?: boolean;
}

export function spawnProcess(command: string, args: string[], options: SpawnProcessOptions = {}): Spawned {
  const { keepStdout = true, ...spawnOptions } = options;
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...spawnOptions });
  let out = '';
  let err = '';
  let ended = false;
  const changes = new Changes();
  if (keepStdout) {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      changes.changed();
    });
  }
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    changes.changed();
  });
  // A child that dies first must not crash the parent with EPIPE on its stdin.
  child.stdin?.on('error', () => {});
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const closed = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true;
      changes.changed();
      resolve({ code, signal });
    });
  });
  const withStderr = (what: What) => () => `${typeof what === 'string' ? what : what()}; stderr was:\n${err}`;
  const waitFor = <T>(check: () => T | undefined, what: What, ms = BOUND_MS): Promise<T> =>
    changes.until(
      () => {
        const value = check();
        if (value === undefined && ended) throw new Error(`exited before ${withStderr(what)()}`);
        return value;
      },
      withStderr(what),
      ms,
    );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    closed,
    waitFor,
    waitForStderr: (text, ms) =>
      waitFor(
        () => ((typeof text === 'string' ? err.includes(text) : text.test(err)) ? true : undefined),
        `${String(text)} on stderr`,
        ms,
      ).then(() => {}),
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Waits for the exit; past the bound it SIGKILLs the child and fails: a hang is a failure, not a stuck test. */
export async function waitForExit(p: Spawned, ms = BOUND_MS): Promise<Exit> {
  try {
    return await within(p.exited, () => `the exit; stderr was:\n${p.stderr()}`, ms);
  } catch (error) {
    p.kill();
    throw error;
  }
}
