/**
 * Ctrl-C from the first instant (docs/design.md §6): `main.ts` imports this first, so a SIGINT
 * that comes while the program is still loading (hundreds of ms on a busy machine; with no
 * listener, Node's default kills the process by the signal, with no line and no exit 130)
 * gets the exit every long command promises: one line on stderr and exit 130.
 *
 * It is the process's first SIGINT listener and stays for its life. Whoever hears SIGINT
 * itself from then on (a long command's `onInterrupt`, `qmd mcp`'s lifecycle, `qmd pull`)
 * says so with `claimSigint()`, and this one is silent while any claim holds. Staying
 * installed also keeps `signal-exit` (loaded by node-llama-cpp's `ora`) from re-raising a
 * SIGINT it thinks no one handles.
 *
 * The state lives under a global symbol: `qmd mcp`'s code-cached script carries its own copy
 * of this module (src/cli/code-cache.ts), and both copies must share one count.
 *
 * A neutral leaf: it imports nothing, so every package may claim.
 */

/** What a shell reports for a command stopped by Ctrl-C (128 + SIGINT). */
export const EXIT_ON_SIGINT = 130;

/** The line a SIGINT gets when nothing of the command hears it yet. */
export const EARLY_SIGINT_LINE = 'Interrupted (Ctrl-C); the index keeps everything committed before now.';

interface SigintState {
  claims: number;
  installed: boolean;
}

const KEY = Symbol.for('qmd.sigint');
const holder = globalThis as { [KEY]?: SigintState };
holder[KEY] ??= { claims: 0, installed: false };
const state: SigintState = holder[KEY];

export interface FirstSigintOptions {
  source?: { on(event: 'SIGINT', listener: () => void): unknown };
  write?: (text: string) => void;
  exit?: (code: number) => void;
  /** Tests only: a line on stderr once the listener is in place, so a test knows when to send. */
  announce?: boolean;
}

/** Installs the process's first SIGINT listener (once). */
export function installFirstSigint(options: FirstSigintOptions = {}): void {
  if (state.installed) return;
  state.installed = true;
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  (options.source ?? process).on('SIGINT', () => {
    if (state.claims > 0) return;
    try {
      write(`${EARLY_SIGINT_LINE}\n`);
    } catch {
      // A closed stderr must not keep the process from leaving.
    }
    exit(EXIT_ON_SIGINT);
  });
  if (options.announce) write('QMD Debug: SIGINT listener installed\n');
}

/**
 * Says that a listener of the caller hears SIGINT from now on; returns its release (for a
 * listener that is removed again). The first listener stays silent while any claim holds.
 */
export function claimSigint(): () => void {
  state.claims++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    state.claims--;
  };
}

/** Tests only: forget every claim and the installation. */
export function resetSigintForTests(): void {
  state.claims = 0;
  state.installed = false;
}
