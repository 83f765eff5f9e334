import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { awaitIndex, mistypedIndex, openStore } from '../../src/core/index.js';
import type { Reader } from '../../src/core/reader-types.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
let root: string;
let opens: number;

beforeEach(() => {
  box = sandbox();
  root = box.notes('notes', { 'a.md': '# A\n\nalpha starter\n', 'b.md': '# B\n\nbravo\n' });
  opens = 0;
});

afterEach(() => {
  box.cleanup();
});

/** An awaiting store over the sandbox's index, opened as `qmd mcp` opens it; counts the opens. */
function awaiting(): Reader {
  return awaitIndex(box.index, () => {
    opens++;
    return openStore(box.index, { readonly: true, quickCheck: 'small' });
  });
}

const noIndexYet = (): string => `No index yet at ${box.index}: qmd collection add DIR`;

describe('awaitIndex: an index that does not exist yet', () => {
  it('refuses every read with INDEX_MISSING "No index yet at PATH: qmd collection add DIR", lists nothing, creates nothing', async () => {
    const store = awaiting();
    expect(store.path).toBe(box.index);
    expect(store.listCollections()).toEqual([]);
    expect(store.listContexts()).toEqual([]);
    for (const read of [
      () => store.query('alpha'),
      () => store.search('alpha'),
      () => store.vsearch('alpha'),
      () => store.get('notes/a.md'),
      () => store.multiGet('**/*.md'),
      () => store.readStatus(),
      () => store.status(),
    ]) {
      expect((await expectQmdError(read, 'INDEX_MISSING')).message).toBe(noIndexYet());
    }
    expect(opens).toBe(0);
    expect(fs.existsSync(box.dir) && fs.readdirSync(box.dir)).toEqual(['notes']);
    await store.close();
  });

  it('opens the index on the first call after it appears, once, and answers from it', async () => {
    const store = awaiting();
    await expectQmdError(() => store.query('alpha'), 'INDEX_MISSING');
    const writer = openStore(box.index);
    await writer.addCollection(root, { name: 'notes' });
    await writer.close();

    const found = await store.query('alpha starter');
    expect(found.hits.map((h) => h.file)).toEqual(['notes/a.md']);
    expect(store.listCollections().map((c) => c.name)).toEqual(['notes']);
    expect(store.get('notes/b.md').text).toContain('bravo');
    expect((await store.readStatus()).documents).toBe(2);
    expect(opens).toBe(1);
    await store.close();
    expect(fs.existsSync(`${box.index}-wal`)).toBe(false);
  });

  it('a file that appears but will not open: that call gets why, and the next one tries again', async () => {
    const store = awaiting();
    fs.mkdirSync(box.index.replace(/\/[^/]+$/, ''), { recursive: true });
    fs.writeFileSync(box.index, 'not a database, not yet'.repeat(200));
    await expectQmdError(() => store.query('alpha'), 'INDEX_CORRUPT');
    // The lists do not throw: the instructions of a server built now read an empty index.
    expect(store.listCollections()).toEqual([]);
    fs.rmSync(box.index);
    const writer = openStore(box.index);
    await writer.addCollection(root, { name: 'notes' });
    await writer.close();
    expect((await store.query('bravo')).hits.map((h) => h.file)).toEqual(['notes/b.md']);
    await store.close();
  });

  it('reports the model searches would use: the one given until the index exists, then the store’s', async () => {
    const given = { spec: '/models/named.gguf', source: 'flag' as const };
    const store = awaitIndex(
      box.index,
      () => openStore(box.index, { readonly: true, embedModel: '/models/other.gguf' }),
      {
        model: given,
      },
    );
    expect(store.embeddingModel()).toEqual(given);
    const writer = openStore(box.index);
    await writer.addCollection(root);
    await writer.close();
    expect(store.embeddingModel()).toMatchObject({ spec: '/models/other.gguf' });
    await store.close();
  });

  it('once closed, opens nothing, even when the index has appeared (a call during teardown)', async () => {
    const store = awaiting();
    await store.close();
    const writer = openStore(box.index);
    await writer.addCollection(root);
    await writer.close();
    await expectQmdError(() => store.query('alpha'), 'CLOSED');
    expect(opens).toBe(0);
    await store.close();
  });
});

describe('mistypedIndex', () => {
  it('refuses a missing index whose folder is missing too, unless it is the default one or INDEX_PATH', () => {
    const env = { XDG_CACHE_HOME: `${box.dir}/cache` };
    const typo = `${box.dir}/no-such-folder/index.sqlite`;
    expect(mistypedIndex(typo, env)?.message).toBe(
      `No index at ${typo}: make one with qmd collection add DIR, or point --index or QMD_INDEX at yours`,
    );
    expect(mistypedIndex(`${box.dir}/cache/qmd/indexes/index.sqlite`, env)).toBeUndefined();
    // A named index (`--index work`) lives in the same folder: served before it exists too.
    expect(mistypedIndex(`${box.dir}/cache/qmd/indexes/work.sqlite`, env)).toBeUndefined();
    expect(mistypedIndex(`${box.dir}/notes/new.sqlite`, env)).toBeUndefined();
    // The peer's INDEX_PATH is served like the default (the peer makes its folders), even when
    // QMD_INDEX names the same path, as it does for the shared server a relay starts.
    const peers = `${box.dir}/peer/deep/index.sqlite`;
    expect(mistypedIndex(peers, { ...env, INDEX_PATH: peers })).toBeUndefined();
    expect(mistypedIndex(peers, { ...env, INDEX_PATH: peers, QMD_INDEX: peers })).toBeUndefined();
    expect(mistypedIndex(peers, { ...env, QMD_INDEX: peers })?.code).toBe('INDEX_MISSING');
    expect(fs.existsSync(`${box.dir}/cache`)).toBe(false);
  });
});
