/**
 * Do the tiny generated reranker and chat model work in node-llama-cpp 3.21.1? Loads each,
 * ranks three documents, and runs one grammar-constrained chat prompt (the expansion's).
 * Run: `npx tsx bench/experiments/models/tiny-models.ts`
 */
import { getLlama, LlamaChatSession } from 'node-llama-cpp';
import { tinyGeneratorPath, tinyRerankerPath } from '../../../test/support/gguf-models.js';

const llama = await getLlama({
  gpu: false,
  build: 'never',
  skipDownload: true,
  maxThreads: 1,
  logger: (level, message) => process.stderr.write(`[llama ${level}] ${message}`),
});
const t0 = performance.now();
const ranker = await llama.loadModel({ modelPath: tinyRerankerPath() });
const ranking = await ranker.createRankingContext({ contextSize: 4096, threads: 1 });
const docs = ['sourdough starter flour water', 'the WAL mode of sqlite', 'a note about nothing'];
console.log('rank', await ranking.rankAll('sourdough bread', docs), Math.round(performance.now() - t0), 'ms');
const t1 = performance.now();
const gen = await llama.loadModel({ modelPath: tinyGeneratorPath() });
const ctx = await gen.createContext({ contextSize: 2048, threads: 1 });
const seq = ctx.getSequence();
const grammar = await llama.createGrammar({
  grammar: 'root ::= line+\nline ::= type ": " content "\\n"\ntype ::= "lex" | "vec" | "hyde"\ncontent ::= [^\\n]+\n',
});
for (let i = 0; i < 3; i++) {
  const session = new LlamaChatSession({ contextSequence: seq, autoDisposeSequence: false });
  console.log('wrapper', session.chatWrapper.wrapperName);
  const t = performance.now();
  let tokens = 0;
  const out = await session.prompt('/no_think Expand this search query: sourdough bread', {
    grammar,
    maxTokens: 300,
    temperature: 0.7,
    topK: 20,
    topP: 0.8,
    onToken: (t) => {
      tokens += t.length;
    },
  });
  console.log(JSON.stringify(out.slice(0, 300)), tokens, 'tokens', Math.round(performance.now() - t), 'ms');
  session.dispose({ disposeSequence: false });
  await seq.clearHistory();
}
console.log('generator loaded+3 prompts', Math.round(performance.now() - t1), 'ms');
await ranking.dispose();
await ctx.dispose();
await ranker.dispose();
await gen.dispose();
await llama.dispose();
