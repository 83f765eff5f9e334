import { constants } from 'node:os';
import { type IPty, spawn } from '@lydell/node-pty';
import { BOUND_MS, Changes, type What, within } from './bounded.js';
import type { Exit } from './spawn.js';

/** The terminal every pty test gets unless it asks for another: the classic 80 × 24. */
export const PTY_COLUMNS = 80;
export const PTY_ROWS = 24;

/** What a person at a terminal types for Ctrl-C: the line discipline turns it into SIGINT. */
export const CTRL_C = '\x03';

/**
 * A program run under a real pseudo-terminal of a fixed size, as a person runs it: its stdin,
 * stdout and stderr are the terminal (`isTTY`, `columns`), and what it writes is what the
 * screen shows, escapes and all. Ctrl-C is the byte 0x03 written to the master, so the kernel
 * sends SIGINT to the foreground process group, as a keyboard would.
 *
 * Why @lydell/node-pty (docs/design.md §5, "A pseudo-terminal for tests"): it installs from
 * the npm registry in seconds with no compiler (a prebuilt binary in a per-platform package,
 * no install script), and it gives the child's own exit code and signal, which `script -qefc`
 * does not (a child killed by SIGINT comes back as 130 there, like one that exits 130).
 */
export interface PtyProcess {
  /** Everything the terminal was sent so far, raw. */
  output(): string;
  /** Types `data` (e.g. `CTRL_C`); nothing once the program has exited. */
  write(data: string): void;
  /** `check()`'s first value other than `undefined`, tried now and as output arrives; rejects past `ms` or when the program ended first. */
  waitFor<T>(check: (output: string) => T | undefined, what: What, ms?: number): Promise<T>;
  /** Resolves once the output contains `text` (or matches it). */
  waitForOutput(text: string | RegExp, ms?: number): Promise<void>;
  /** The program's own exit: its code, or the signal that killed it (`SIGINT`, `SIGSEGV`…). */
  exited: Promise<Exit>;
  /** SIGKILLs the program if it still runs. Call in `finally`. */
  kill(): void;
}

export interface PtyOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  columns?: number;
  rows?: number;
}

export function runInPty(file: string, args: string[], options: PtyOptions): PtyProcess {
  const pty: IPty = spawn(file, args, {
    name: 'xterm-256color',
    cols: options.columns ?? PTY_COLUMNS,
    rows: options.rows ?? PTY_ROWS,
    env: options.env,
    ...(options.cwd !== undefined && { cwd: options.cwd }),
  });
  let out = '';
  let ended = false;
  const changes = new Changes();
  pty.onData((data) => {
    out += data;
    changes.changed();
  });
  const exited = new Promise<Exit>((resolve) => {
    pty.onExit(({ exitCode, signal }) => {
      ended = true;
      changes.changed();
      resolve(signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null });
    });
  });
  const withOutput = (what: What) => () => `${typeof what === 'string' ? what : what()}; the terminal showed:\n${out}`;
  const waitFor = <T>(check: (output: string) => T | undefined, what: What, ms = BOUND_MS): Promise<T> =>
    changes.until(
      () => {
        const value = check(out);
        // Every byte has arrived by the exit (bench/experiments/pty/exit-race.mjs: 200 of 200).
        if (value === undefined && ended) throw new Error(`exited before ${withOutput(what)()}`);
        return value;
      },
      withOutput(what),
      ms,
    );
  return {
    output: () => out,
    write(data) {
      // A program that has just exited cannot be typed to: the keys go nowhere, as on a screen.
      if (ended) return;
      try {
        pty.write(data);
      } catch {
        // Gone meanwhile.
      }
    },
    waitFor,
    waitForOutput: (text, ms) =>
      waitFor(
        (output) => ((typeof text === 'string' ? output.includes(text) : text.test(output)) ? true : undefined),
        `${String(text)} on the terminal`,
        ms,
      ).then(() => {}),
    exited,
    kill() {
      if (!ended) {
        try {
          pty.kill('SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
    },
  };
}

/** Waits for the exit; past the bound it kills the program and fails, with what the screen showed. */
export async function ptyExit(p: PtyProcess, ms = BOUND_MS): Promise<Exit> {
  try {
    return await within(p.exited, () => `the exit; the terminal showed:\n${p.output()}`, ms);
  } catch (error) {
    p.kill();
    throw error;
  }
}

function signalName(signal: number): NodeJS.Signals {
  const entry = Object.entries(constants.signals).find(([, n]) => n === signal);
  return (entry?.[0] ?? `SIG${signal}`) as NodeJS.Signals;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's escape sequences are what is removed.
const ESCAPES = /\x1b\[[0-9;?]*[A-Za-z]/g;

/**
 * The lines a person would read once the program is done: each `\r` returns to the start of
 * the line, so only what was written after the last one on a line remains; escapes removed.
 */
export function screenLines(output: string): string[] {
  return output
    .replace(ESCAPES, '')
    .split('\n')
    .map((line) =>
      (
        line
          .split('\r')
          .filter((part) => part !== '')
          .at(-1) ?? ''
      ).trimEnd(),
    );
}

/** Every frame the bar was drawn as: the pieces between carriage returns, escapes removed. */
export function frames(output: string): string[] {
  return output
    .replace(ESCAPES, '')
    .split(/[\r\n]/)
    .filter((part) => part.trim() !== '');
}
