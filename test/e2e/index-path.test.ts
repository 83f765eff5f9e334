/**
 * Where the spawned CLI finds its index: `--index` (a path, or a bare name for a named index),
 * else `QMD_INDEX`, else `INDEX_PATH` (qmd 2.8's variable), else the cache default,
 * `indexes/index.sqlite` (an index of ours at the old default is still found). `qmd status`
 * names the index it looked for.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';

const ws = tempWorkspace();
afterAll(() => ws.cleanup());

/** qmdEnv without QMD_INDEX, the cache pointed into the workspace, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { QMD_INDEX: _unused, ...env } = qmdEnv(ws.index);
  return { ...env, XDG_CACHE_HOME: join(ws.dir, 'cache'), ...extra };
}

/**
 * The index `qmd status` looked for. None exists, and a read never makes one (a typo must not
 * grow an empty index): it
 * answers `No index at PATH`, exit 1, and PATH is still not there afterwards.
 */
async function indexOpened(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const run = await runQmd([...args, 'status', '--json'], env);
  expect(run.code, run.stderr).toBe(1);
  const path = /^qmd: No index at (\S+): make one with qmd collection add DIR/.exec(run.stderr)?.[1] ?? '';
  expect(existsSync(path), path).toBe(false);
  return path;
}

describe('the index location', () => {
  it('is --index, else QMD_INDEX, else INDEX_PATH, else the cache default', async () => {
    const peer = join(ws.dir, 'peer.sqlite');
    const ours = join(ws.dir, 'ours.sqlite');
    const flag = join(ws.dir, 'flag.sqlite');
    expect(await indexOpened([], envWith({ INDEX_PATH: peer }))).toBe(peer);
    expect(await indexOpened([], envWith({ INDEX_PATH: peer, QMD_INDEX: ours }))).toBe(ours);
    expect(await indexOpened(['--index', flag], envWith({ INDEX_PATH: peer, QMD_INDEX: ours }))).toBe(flag);
    expect(await indexOpened([], envWith({}))).toBe(join(ws.dir, 'cache', 'qmd', 'indexes', 'index.sqlite'));
    // A bare name is a named index, as qmd 2.x's `--index work` is.
    expect(await indexOpened(['--index', 'work'], envWith({ QMD_INDEX: ours }))).toBe(
      join(ws.dir, 'cache', 'qmd', 'indexes', 'work.sqlite'),
    );
  });

  it("still finds an index of ours at the old default, qmd 2.x's path, until the new default exists", async () => {
    const legacy = join(ws.dir, 'cache', 'qmd', 'index.sqlite');
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], envWith({ QMD_INDEX: legacy }));
    expect(added.code, added.stderr).toBe(0);
    const status = await runQmd(['status', '--json'], envWith({}));
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { index: string }).index).toBe(legacy);
  });
});
