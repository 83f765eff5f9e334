import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned child with its output collected and helpers that wait for observable events. */
export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr contains `text` (or matches), rejects after `ms` with what was seen. */
  waitForStderr(text: string | RegExp, ms?: number): Promise<void>;
  exited: Promise<Exit>;
  /** SIGKILLs the child if it still runs. Call in `finally`. */
  kill(): void;
}

export function spawnProcess(command: string, args: string[], options: SpawnOptions = {}): Spawned {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStderr(text, ms = 20_000) {
      const seen = () => (typeof text === 'string' ? err.includes(text) : text.test(err));
      if (seen()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${String(text)} on stderr within ${ms} ms; stderr was:\n${err}`));
        }, ms);
        const check = (): void => {
          if (!seen()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        void exited.then(() => {
          if (!seen()) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`exited before ${String(text)} appeared on stderr; stderr was:\n${err}`));
          }
        });
      });
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Waits for the exit with a generous bound; a hang is a failure, not a stuck test. */
export async function waitForExit(p: Spawned, ms = 20_000): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not exit within ${ms} ms; stderr:\n${p.stderr()}`)), ms);
  });
  try {
    return await Promise.race([p.exited, bound]);
  } finally {
    clearTimeout(timer);
  }
}
