import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
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

/** Runs a command to completion (SIGKILLed after `bound` ms), collecting its output. */
export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv, bound = 600_000): Promise<QmdRun> {
  const started = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-16_384);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), bound);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
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
