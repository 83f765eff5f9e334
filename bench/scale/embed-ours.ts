/**
 * `tsx bench/scale/embed-ours.ts INDEX MODEL`: embeds every chunk of INDEX through the store's
 * own `embed()` with the stand-in embedder (stand-in-embedder.ts); prints the report as JSON.
 * A child process of its own, so its memory is not the benchmark's.
 */
import { openStore } from '../../src/core/index.js';
import { standInEmbedder } from './stand-in-embedder.js';

const [index, model] = process.argv.slice(2);
if (index === undefined || model === undefined) throw new Error('usage: embed-ours.ts INDEX MODEL');
const store = openStore(index, { embedModel: model, createEmbedder: standInEmbedder, embedThreads: 1 });
try {
  const report = await store.embed({ batchSize: 4096 });
  process.stdout.write(`${JSON.stringify(report)}\n`);
} finally {
  await store.close();
}
