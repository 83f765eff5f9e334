import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { DEFAULT_NOTES } from './notes.js';
import { type Spawned, spawnProcess } from './spawn.js';
import { staleBuild } from './stale-build.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  bin: { qmd: string };
};

/**
 * The binary users run: package.json's `bin.qmd`, the bundle `npm run build` writes (`npm test`
 * builds first). Every spawned test runs it, so they all test the bundle as shipped;
 * `test/e2e/packed.test.ts` also checks that the packed tarball holds everything it loads.
 */
export const QMD_BIN = fileURLToPath(new URL(`../../${pkg.bin.qmd}`, import.meta.url));

export { DEFAULT_NOTES };

// A source change tested without `npm run build` would silently test the old bundle: refuse, in
// one line, every file that imports this (each spawns QMD_BIN). A check here, not a vitest
// globalSetup, so unit tests that never run dist/ still run against an unbuilt change.
const stale = staleBuild(QMD_BIN);
if (stale !== undefined) throw new Error(stale);

/** A temp directory with a few markdown notes and an index path; `cleanup()` removes it. */
export function tempWorkspace(notes: Record<string, string> = DEFAULT_NOTES) {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-e2e-'));
  const notesDir = join(dir, 'notes');
  for (const [file, text] of Object.entries(notes)) {
    const path = join(notesDir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return {
    dir,
    notesDir,
    index: join(dir, 'index.sqlite'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A workspace whose notes are indexed as the collection `notes` before the file's tests run
 * (`qmd collection add`, spawned, as a user would), removed after them. For a test file's top level.
 */
export function indexedWorkspace(notes: Record<string, string> = DEFAULT_NOTES) {
  const ws = tempWorkspace(notes);
  beforeAll(async () => {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], qmdEnv(ws.index));
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(() => ws.cleanup());
  return ws;
}

/** The text of a tool result's blocks, joined: what a model would read. */
export function textOf(result: unknown): string {
  const content =
    (result as { content?: Array<{ type: string; text?: string; resource?: { text?: string } }> }).content ?? [];
  // An embedded document (get, multi_get) is read for its text too.
  return content.map((block) => block.text ?? block.resource?.text ?? '').join('\n');
}

/**
 * Where spawned qmd keeps its compile caches (src/cli/boot.ts, code-cache.ts): one directory
 * for the whole run, as a user's ~/.cache would be, but not the user's.
 */
export const TEST_CACHE_HOME = join(tmpdir(), 'qmd-test-cache');

/**
 * Env for a spawned qmd: the workspace's index, no inherited QMD_* settings nor INDEX_PATH, the
 * test cache home. The reranking and query expansion models are off unless `extra` names them:
 * their defaults are `hf:` models no test machine has, and a query would say so in every
 * result (test/e2e/models.test.ts runs the defaults, and the tiny generated models).
 */
export function qmdEnv(index: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('QMD_') && k !== 'INDEX_PATH') env[k] = v;
  return {
    ...env,
    XDG_CACHE_HOME: TEST_CACHE_HOME,
    QMD_INDEX: index,
    QMD_RERANK_MODEL: 'off',
    QMD_EXPAND_MODEL: 'off',
    ...extra,
  };
}

/** Runs a one-shot `qmd` command to completion. */
export async function runQmd(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnProcess(process.execPath, [QMD_BIN, ...args], { env, ...options });
  p.child.stdin?.end();
  const exit = await p.closed;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}

/** Starts `qmd mcp` (stdio) as a child of the test; `keepStdout: false` leaves its stdout unread. */
export function spawnMcp(env: NodeJS.ProcessEnv, args: string[] = [], options: { keepStdout?: boolean } = {}): Spawned {
  return spawnProcess(process.execPath, [QMD_BIN, 'mcp', ...args], { env, ...options });
}
