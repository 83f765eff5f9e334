/** Where the index lives (`paths.ts`): named indexes, the default, and ours at the old default. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { headerApplicationId, isIndexName, legacyIndexPath, resolveIndexPath } from '../../src/store/paths.js';
import { APPLICATION_ID } from '../../src/store/schema/schema-id.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

describe('resolveIndexPath', () => {
  it('--index NAME is indexes/NAME.sqlite; a path is that path; the default is indexes/index.sqlite', () => {
    const env = { XDG_CACHE_HOME: box.dir };
    expect(resolveIndexPath({ env })).toBe(join(box.dir, 'qmd', 'indexes', 'index.sqlite'));
    expect(resolveIndexPath({ flag: 'work', env })).toBe(join(box.dir, 'qmd', 'indexes', 'work.sqlite'));
    expect(resolveIndexPath({ flag: 'work', env: { ...env, QMD_INDEX: '/q.sqlite' } })).toBe(
      join(box.dir, 'qmd', 'indexes', 'work.sqlite'),
    );
    expect(resolveIndexPath({ flag: '/x/work', env })).toBe('/x/work');
    expect(resolveIndexPath({ flag: 'work.sqlite', env })).toBe(join(process.cwd(), 'work.sqlite'));
  });

  it('isIndexName: letters, digits, _ and -; a dot or a slash makes a path', () => {
    for (const name of ['work', 'Work_2', 'né-1']) expect(isIndexName(name), name).toBe(true);
    for (const path of ['.', 'a.sqlite', 'a/b', '-x', '', 'x'.repeat(65)]) expect(isIndexName(path), path).toBe(false);
  });

  it("uses an index of ours at the old default while the new one does not exist; never qmd 2.x's", async () => {
    const env = { XDG_CACHE_HOME: box.dir };
    const legacy = join(box.dir, 'qmd', 'index.sqlite');
    expect(legacyIndexPath(env)).toBeUndefined();
    const ours = openStore(legacy);
    await ours.close();
    expect(headerApplicationId(legacy)).toBe(APPLICATION_ID);
    expect(resolveIndexPath({ env })).toBe(legacy);
    // Once the new default exists, it wins.
    const fresh = openStore(join(box.dir, 'qmd', 'indexes', 'index.sqlite'));
    await fresh.close();
    expect(resolveIndexPath({ env })).toBe(join(box.dir, 'qmd', 'indexes', 'index.sqlite'));
  });

  it("does not take qmd 2.x's index, another SQLite file or a short file at the old default", () => {
    const env = { XDG_CACHE_HOME: box.dir };
    const legacy = join(box.dir, 'qmd', 'index.sqlite');
    mkdirSync(join(box.dir, 'qmd'), { recursive: true });
    const peer = new Sqlite(legacy);
    peer.exec('CREATE TABLE llm_cache (hash TEXT)');
    peer.close();
    expect(headerApplicationId(legacy)).toBe(0);
    expect(resolveIndexPath({ env })).toBe(join(box.dir, 'qmd', 'indexes', 'index.sqlite'));
    writeFileSync(legacy, 'short');
    expect(headerApplicationId(legacy)).toBeUndefined();
    expect(legacyIndexPath(env)).toBeUndefined();
  });
});
