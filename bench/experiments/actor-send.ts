/**
 * Experiment (not part of `npm run bench`): what the lifecycle actor costs per tool call, and
 * why it costs more inside a real workload than in a tight loop. Each call of a gated tool
 * used to send `handler.started` and `handler.settled` to the actor (a full XState macrostep
 * each); this is why the host now sends them only once teardown has started (or when a trace
 * or inspector watches), and the trigger carries the gate's count into the machine.
 * Timed two ways: back to back, and around a BM25 search of the 1,000-note corpus (as in a
 * real `query` call, where the search leaves the CPU caches cold for XState's code and data).
 *
 * Run: npx tsx bench/experiments/actor-send.ts [CALLS=1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore } from '../../src/core/index.js';
import { cachedCorpus } from '../lib/corpus.js';
import { benchLifecycle } from '../lib/lifecycle.js';
import { TMP } from '../lib/paths.js';

const calls = Number(process.argv[2] ?? 1000);
const lifecycle = benchLifecycle();
const corpus = cachedCorpus(1000);
const dir = mkdtempSync(join(TMP, 'actor-send-'));
const writer = openStore(join(dir, 'index.sqlite'));
await writer.addCollection(corpus.dir, { name: 'notes' });
await writer.close();
const store = openStore(join(dir, 'index.sqlite'), { readonly: true });
const query = `${corpus.common[0]} ${corpus.common[1]}`;
const send = (type: 'handler.started' | 'handler.settled') => lifecycle.actor.send({ type });

console.log('round  2 sends around a search (µs/call)  2 sends back to back (µs/call)  search (ms)');
for (let round = 0; round < 5; round++) {
  let around = 0;
  let searching = 0;
  for (let i = 0; i < calls; i++) {
    let t = performance.now();
    send('handler.started');
    around += performance.now() - t;
    t = performance.now();
    store.search(query);
    searching += performance.now() - t;
    t = performance.now();
    send('handler.settled');
    around += performance.now() - t;
  }
  const t = performance.now();
  for (let i = 0; i < calls; i++) {
    send('handler.started');
    send('handler.settled');
  }
  const backToBack = performance.now() - t;
  console.log(
    `${round}      ${((around * 1000) / calls).toFixed(1).padStart(8)}                          ${((backToBack * 1000) / calls).toFixed(1).padStart(8)}                      ${(searching / calls).toFixed(2)}`,
  );
}
await lifecycle.shutdown('done');
await store.close();
rmSync(dir, { recursive: true, force: true });
