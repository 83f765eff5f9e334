import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** How a promise settled, without throwing: for asserting on several calls at once. */
export function settled<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `test/llm/fixtures/NAME.ts` in a fresh node (through tsx) and resolves when it exits.
 * The bound only stops a runaway child; the test waits for the exit, not for time.
 */
export function runFixture(
  name: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
  boundMs = 50_000, // below vitest's 60 s test timeout: a timed-out test leaves no child behind
): Promise<ChildResult> {
  const file = fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const bound = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
