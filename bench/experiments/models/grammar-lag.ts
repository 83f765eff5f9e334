/**
 * How long does a grammar-constrained generation hold Node's event loop (node-llama-cpp 3.21.1,
 * CPU, the tiny chat model)? A 10 ms timer's worst lateness during one generation, for the
 * expansion grammar with each line bounded by `{1,300}` and unbounded (`+`), and with no grammar.
 * `--reuse-wrapper`: each session is given the chat wrapper resolved once, instead of resolving
 * it from the model again.
 * Run: `npx tsx bench/experiments/models/grammar-lag.ts [--reuse-wrapper]`
 */
import { getLlama, LlamaChatSession, resolveChatWrapper } from 'node-llama-cpp';
import { tinyGeneratorPath } from '../../../test/support/gguf-models.js';

const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 1, progressLogs: false });
const model = await llama.loadModel({ modelPath: tinyGeneratorPath() });
const context = await model.createContext({ contextSize: 2048, threads: 1 });
const sequence = context.getSequence();
let t1 = performance.now();
new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false }).dispose({ disposeSequence: false });
console.log(`a new chat session (the chat wrapper resolved from the model): ${(performance.now() - t1).toFixed(0)} ms`);
t1 = performance.now();
const chatWrapper = resolveChatWrapper(model);
console.log(`resolveChatWrapper(model): ${(performance.now() - t1).toFixed(0)} ms`);
const reuse = process.argv.includes('--reuse-wrapper');
const head =
  'root ::= line line? line? line? line? line? line? line?\nline ::= type ": " content "\\n"\ntype ::= "lex" | "vec" | "hyde"\n';
const grammars: Array<[string, string | undefined]> = [
  ['content ::= [^\\n]{1,300}', `${head}content ::= [^\\n]{1,300}`],
  ['content ::= [^\\n]{1,60}', `${head}content ::= [^\\n]{1,60}`],
  ['content ::= [^\\n]+', `${head}content ::= [^\\n]+`],
  ['no grammar', undefined],
];
for (const [label, text] of grammars) {
  const t0 = performance.now();
  const grammar = text === undefined ? undefined : await llama.createGrammar({ grammar: text });
  const created = performance.now() - t0;
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  const session = new LlamaChatSession({
    contextSequence: sequence,
    autoDisposeSequence: false,
    ...(reuse && { chatWrapper }),
  });
  const t = performance.now();
  let tokens = 0;
  await session.prompt('/no_think Expand this search query: sourdough bread', {
    ...(grammar && { grammar }),
    maxTokens: 300,
    temperature: 0.7,
    topK: 20,
    topP: 0.8,
    seed: 42,
    onToken: (chunk) => {
      tokens += chunk.length;
    },
  });
  clearInterval(timer);
  session.dispose({ disposeSequence: false });
  await sequence.clearHistory();
  console.log(
    `${label}: grammar made in ${created.toFixed(0)} ms; ${tokens} tokens in ${(performance.now() - t).toFixed(0)} ms; loop held at most ${worst.toFixed(0)} ms`,
  );
}
await context.dispose();
await model.dispose();
await llama.dispose();
