import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import type { QmdErrorCode } from '../../src/errors.js';
import { isQmdError } from '../../src/errors.js';

/** A temp directory per test, removed by `cleanup()`. */
export interface Sandbox {
  dir: string;
  index: string;
  /** Writes files under `dir/relative`, creating folders. Returns the folder. */
  notes(relative: string, files: Record<string, string>): string;
  cleanup(): void;
}

export function sandbox(): Sandbox {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qmd-store-test-'));
  return {
    dir,
    index: path.join(dir, 'index', 'index.sqlite'),
    notes(relative, files) {
      const root = path.join(dir, relative);
      fs.mkdirSync(root, { recursive: true });
      for (const [name, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
        fs.writeFileSync(path.join(root, name), text);
      }
      return root;
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `work` and asserts it throws a QmdError with `code`; returns the error. */
export async function expectQmdError(work: () => unknown, code: QmdErrorCode): Promise<Error> {
  let caught: unknown;
  try {
    await work();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a QmdError ${code}`).toBeDefined();
  if (!isQmdError(caught)) throw caught;
  expect(caught.code, caught.message).toBe(code);
  // One line: the CLI prints it as is.
  expect(caught.message).not.toContain('\n');
  return caught;
}
