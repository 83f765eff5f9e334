/**
 * Vectors follow the text (docs/design.md §9.5): a note the watcher indexes is embedded in the
 * background with the served reader's model, and searched by meaning; a model not on disk stops
 * it with one line, never a download. The real tiny model.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import type { Reader } from '../../src/core/reader-types.js';
import { watchIndex } from '../../src/watch/index.js';
import type { IndexWatcher } from '../../src/watch/types.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';
import { linesLog, untilIndexed } from './helpers.js';

let box: Sandbox | undefined;
let reader: Reader | undefined;
let watcher: IndexWatcher | undefined;
afterEach(async () => {
  await watcher?.close();
  await reader?.close();
  box?.cleanup();
  box = reader = watcher = undefined;
});

async function embeddedIndex(): Promise<{ box: Sandbox; root: string }> {
  const b = sandbox();
  const root = b.notes('notes', { 'a.md': '# Cats\n\nThe cat sat on the mat.\n' });
  const store = openStore(b.index, { embedModel: tinyModelPath(), embedThreads: 1 });
  await store.addCollection(root, { name: 'notes' });
  await store.embed();
  await store.close();
  return { box: b, root };
}

/** Resolves once `check()` holds, looked at after each turn of a 20 ms timer; rejects past `ms`. */
function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      if (check()) {
        resolve();
        return;
      }
      if (Date.now() - started > ms) {
        reject(new Error(`not within ${ms} ms: ${what}`));
        return;
      }
      setTimeout(look, 20);
    };
    look();
  });
}

describe('vectors follow', () => {
  it("embeds a new note in the background with the served reader's model", async () => {
    const made = await embeddedIndex();
    box = made.box;
    reader = openReader(box.index, { readonly: true, embedModel: tinyModelPath(), embedThreads: 1 });
    const log = linesLog();
    watcher = watchIndex(reader, { log, embed: true });
    const w = watcher;
    const r = reader;
    await w.start();
    fs.writeFileSync(path.join(made.root, 'dogs.md'), '# Dogs\n\nThe dog barked at the mailman.\n');
    await untilIndexed(w, () => r.search('mailman').length === 1, 'the note indexed');
    await until(() => w.report().vectorsPending === 0, 'its vectors');
    const before = await r.vsearch('dog barked mailman');
    expect(before.hits.map((h) => h.file)).toContain('notes/dogs.md');
    const status = r.status();
    expect(status.needsEmbedding).toBe(0);
    expect(log.lines.filter((l) => l.includes('vectors no longer follow'))).toEqual([]);
  }, 60_000);

  it('stops following, with one line, when the model is not on disk', async () => {
    const made = await embeddedIndex();
    box = made.box;
    const missing = path.join(box.dir, 'gone.gguf');
    reader = openReader(box.index, { readonly: true, embedModel: missing });
    const log = linesLog();
    watcher = watchIndex(reader, { log, embed: true });
    const w = watcher;
    const r = reader;
    await w.start();
    fs.writeFileSync(path.join(made.root, 'dogs.md'), '# Dogs\n\nThe dog barked.\n');
    await untilIndexed(w, () => r.search('barked').length === 1, 'the note indexed');
    await until(() => w.report().vectors !== undefined, 'vectors given up');
    expect(w.report().vectorsPending).toBe(0);
    expect(log.lines.filter((l) => l.includes('vectors no longer follow'))).toHaveLength(1);
    expect(fs.existsSync(missing)).toBe(false);
  }, 60_000);
});
