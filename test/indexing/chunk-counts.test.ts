/**
 * On one index `qmd embed` said "11 chunks in the index" and `qmd status` said
 * "91/91 chunks". Notes that share a section (a template, a common footer) share its chunk:
 * embed counted distinct chunks, status counted one per note. Both numbers now come from one
 * count; this test reads both from one real index embedded with the real tiny model.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';

/** Long enough to be a chunk of its own under the tiny model's ~500-byte budget. */
const routine = Array.from({ length: 12 }, () => '- Check the inbox, water the plants, review the calendar.').join(
  '\n',
);
const DAYS = 8;
const dailyNotes = Object.fromEntries(
  Array.from({ length: DAYS }, (_, i) => [
    `2025-01-${String(i + 10)}.md`,
    `# Day ${i + 10}\n\nToday was day ${i + 10} of the month.\n\n## Routine\n\n${routine}\n`,
  ]),
);

let box: Sandbox;
let store: Store;
let root: string;

beforeAll(async () => {
  box = sandbox();
  root = box.notes('daily', dailyNotes);
  store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
  await store.addCollection(root, { name: 'daily' });
});

afterAll(async () => {
  await store.close();
  box.cleanup();
});

describe('chunk counts', () => {
  it('embed and status give the same count on one index, a shared section counted once', async () => {
    const report = await store.embed();
    const { embeddings } = store.status();
    expect(embeddings.chunks).toBe(report.chunks);
    expect(embeddings.embeddedChunks).toBe(report.embedded);
    // Each note has its own opening and shares the routine: more notes than distinct chunks
    // would be impossible, one per note plus the shared ones is what the index holds.
    expect(report.embedded).toBe(report.chunks);
    expect(report.chunks).toBeGreaterThan(DAYS);
    expect(report.chunks).toBeLessThan(2 * DAYS);
  });

  it('a second run and a changed note keep them equal', async () => {
    const again = await store.embed();
    expect(again.embedded).toBe(0);
    expect(again.skipped).toBe(again.chunks);
    expect(store.status().embeddings).toMatchObject({ chunks: again.chunks, embeddedChunks: again.chunks });

    fs.writeFileSync(path.join(root, '2025-01-10.md'), `# Day 10\n\nA different day.\n\n## Routine\n\n${routine}\n`);
    await store.update();
    const changed = await store.embed();
    expect(changed.embedded).toBe(1);
    expect(changed.chunks).toBe(again.chunks);
    expect(store.status().embeddings).toMatchObject({ chunks: changed.chunks, embeddedChunks: changed.chunks });
  });
});
