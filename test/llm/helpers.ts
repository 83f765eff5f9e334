import { fileURLToPath } from 'node:url';
import { spawnProcess, waitForExit } from '../support/spawn.js';

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
 * Runs `test/llm/fixtures/NAME.ts` in a fresh node (through tsx) and resolves when it exits,
 * with all of its output. The bound only stops a runaway child (SIGKILL, and the test fails).
 */
export async function runFixture(
  name: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
  boundMs = 50_000, // below vitest's 60 s test timeout: a timed-out test leaves no child behind
): Promise<ChildResult> {
  const file = fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
  const p = spawnProcess(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForExit(p, boundMs);
  const exit = await p.closed;
  return { ...exit, stdout: p.stdout(), stderr: p.stderr() };
}
