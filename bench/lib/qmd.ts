import { performance } from 'node:perf_hooks';
import { within } from '../../test/support/bounded.js';
import { spawnProcess } from '../../test/support/spawn.js';
import { BENCH_CACHE_HOME, QMD_BIN } from './paths.js';

/** Env for a spawned qmd: no inherited QMD_* settings, the bench's cache home, then `extra`. */
export function qmdEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('QMD_')) env[key] = value;
  return { ...env, XDG_CACHE_HOME: BENCH_CACHE_HOME, ...extra };
}

export interface QmdRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Spawn to exit, measured in this process. */
  ms: number;
}

/** Runs a one-shot `qmd` command to completion (SIGKILLed after `bound` ms). */
export function runQmd(args: string[], env: NodeJS.ProcessEnv, bound = 600_000): Promise<QmdRun> {
  return runCommand(process.execPath, [QMD_BIN, ...args], env, bound);
}

/** Runs a command to completion (SIGKILLed after `bound` ms), collecting its output (the last 16 KiB of stderr). */
export async function runCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  bound = 600_000,
): Promise<QmdRun> {
  const started = performance.now();
  const p = spawnProcess(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const { code, signal } = await within(p.closed, 'the command to finish', bound).catch(() => {
    p.kill();
    return p.closed;
  });
  const ms = performance.now() - started;
  return { code, signal, stdout: p.stdout(), stderr: p.stderr().slice(-16_384), ms };
}

/** Throws with the command's stderr unless it exited 0. */
export async function runQmdOk(args: string[], env: NodeJS.ProcessEnv, bound?: number): Promise<QmdRun> {
  const run = await runQmd(args, env, bound);
  if (run.code !== 0) {
    throw new Error(`qmd ${args.join(' ')} exited ${run.code ?? run.signal}: ${run.stderr.trim().slice(-2000)}`);
  }
  return run;
}

/** The line of `text` that names why it failed: the last non-empty one. */
export function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .at(-1) ?? ''
  );
}
