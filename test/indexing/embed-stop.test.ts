/**
 * `stop` (Ctrl-C, issue 31) for `embed`: the chunk in flight finishes, its batch is saved,
 * and `embed()` resolves with `stopped`; the next run embeds the rest. The real tiny model.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import type { Failpoints } from '../../src/failpoints.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';

let box: Sandbox;
const stores: Store[] = [];
const open = (options: Parameters<typeof openStore>[1] = {}) => {
  const store = openStore(box.index, options);
  stores.push(store);
  return store;
};

beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  box.cleanup();
});

/** `n` one-line notes, `n000.md`…, each with its own word. */
function manyNotes(n: number, word = 'note'): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`n${String(i).padStart(3, '0')}.md`] = `# ${word} ${i}\n\n${word}${i}\n`;
  return files;
}

describe('embed with stop', () => {
  // One Llama for the file, as test/indexing/embeddings.test.ts does.
  const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
  beforeAll(() => keeper.dimensions());
  afterAll(() => keeper.dispose());

  /** Fires `stop` from inside the `call`-th embedding, which then completes: the chunk in flight. */
  function stopInside(call: number, stop: AbortController): Failpoints {
    let calls = 0;
    return {
      names: ['llm.embed'],
      has: (name) => name === 'llm.embed',
      carry: () => undefined,
      hit: (name) => {
        if (name === 'llm.embed' && ++calls === call) stop.abort();
        return undefined;
      },
    };
  }

  it('finishes the chunk in flight, saves its batch, resolves stopped; the next run embeds the rest', async () => {
    const root = box.notes('notes', manyNotes(8));
    await open().addCollection(root, { name: 'notes' });
    const stop = new AbortController();
    const store = open({ embedModel: tinyModelPath(), embedThreads: 1, failpoints: stopInside(3, stop) });
    const report = await store.embed({ stop: stop.signal, batchSize: 2 });
    expect(report).toMatchObject({ stopped: true, embedded: 3, chunks: 8 });
    const rest = await open({ embedModel: tinyModelPath(), embedThreads: 1 }).embed();
    expect(rest).toMatchObject({ embedded: 5, skipped: 3 });
    expect(rest.stopped).toBeUndefined();
  });

  it('stopped before the model is read: rejects ABORTED (nothing to keep), chunks nothing, embeds nothing', async () => {
    const root = box.notes('notes', manyNotes(4));
    await open().addCollection(root, { name: 'notes' });
    const store = open({ embedModel: tinyModelPath(), embedThreads: 1 });
    await expectQmdError(() => store.embed({ stop: AbortSignal.abort() }), 'ABORTED');
    expect(store.status().embeddings).toMatchObject({ chunks: 0, embeddedChunks: 0 });
  });
});
