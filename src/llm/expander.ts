/**
 * The query expander: a small chat model asked to rewrite a query as typed search lines,
 * `lex: …` (keywords for BM25), `vec: …` (a question, searched by meaning) and `hyde: …` (a
 * passage that looks like the answer), as the peer's fine-tuned model emits them. A grammar
 * constrains the output to those lines, so whatever the model, the answer parses.
 *
 * One generation is one native call through the queue. Unlike an embedding it can be
 * stopped: node-llama-cpp checks the call's signal between tokens, so the teardown (or the
 * caller cancelling) ends it after the token being computed, and waits only for that.
 */
import type { ChatWrapper, Llama, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import { abortedError, disposedError } from './errors.js';
import { EXPAND_MODEL_KIND } from './model-defaults.js';
import { NativeModel, type NativeModelOptions } from './native-model.js';
import { type LlmRuntime, type RuntimeChoice, runtimeFor } from './runtime.js';

export { DEFAULT_EXPAND_MODEL } from './model-defaults.js';

export type ExpansionType = 'lex' | 'vec' | 'hyde';

export interface Expansion {
  type: ExpansionType;
  text: string;
}

/** At most this many lines: the MCP `query` tool takes 10 sub-searches, two of them the query's own. */
export const MAX_EXPANSION_LINES = 8;
/** Characters of one line's text (a hyde passage is a sentence or two). */
const MAX_LINE_CHARS = 300;

/**
 * Typed lines only, at most MAX_EXPANSION_LINES of them, each a non-empty text without a
 * newline. llama.cpp's GBNF; `{m,n}` bounds a repetition.
 */
export const EXPANSION_GRAMMAR = [
  `root ::= line${' line?'.repeat(MAX_EXPANSION_LINES - 1)}`,
  'line ::= type ": " content "\\n"',
  'type ::= "lex" | "vec" | "hyde"',
  `content ::= [^\\n]{1,${MAX_LINE_CHARS}}`,
].join('\n');

/**
 * The peer's prompt and sampling (its model was trained on them): Qwen3's recommended
 * non-thinking settings, and no greedy decoding (it loops). A fixed seed, so one query gives
 * one expansion on a given machine: results a user can reproduce.
 */
const PROMPT = (query: string): string => `/no_think Expand this search query: ${query}`;
const SAMPLING = {
  maxTokens: 600,
  temperature: 0.7,
  topK: 20,
  topP: 0.8,
  repeatPenalty: { lastTokens: 64, presencePenalty: 0.5 },
  seed: 42,
} as const;

/** Its chat context: the prompt and up to 600 tokens of answer, with room to spare (the peer's size). */
const CONTEXT_TOKENS = 2048;

export interface ExpanderOptions extends NativeModelOptions, RuntimeChoice {
  /**
   * Runs at the start of every generation, inside the native section (the `llm.expand`
   * failpoint, the debug line).
   */
  beforeExpand?: (signal: AbortSignal) => Promise<void> | undefined;
}

export interface Expander {
  /**
   * The typed lines the model writes for `query`, as written (the caller decides which to
   * keep). `ABORTED` when `signal` fires first, `DISPOSED` once the teardown has begun,
   * `MODEL_UNAVAILABLE` when the model cannot load.
   */
  expand(query: string, options?: { signal?: AbortSignal }): Promise<Expansion[]>;
  load(): Promise<void>;
  readonly running: number;
  readonly queued: number;
  dispose(): Promise<void>;
}

interface Loaded {
  model: LlamaModel;
  sequence: LlamaContextSequence;
  grammar: LlamaGrammar;
  Session: typeof import('node-llama-cpp').LlamaChatSession;
  /**
   * The model's chat wrapper, resolved once: a `LlamaChatSession` made without one resolves it
   * from the model's template, synchronously, 0.5–1.6 s here each time, holding the event loop
   * (`bench/experiments/models/grammar-lag.ts`: a 10 ms timer 0.6–2 s late during an expansion,
   * 23 ms with the wrapper resolved once).
   */
  chatWrapper: ChatWrapper;
}

export function createExpander(options: ExpanderOptions): Expander {
  return new LlamaExpander(runtimeFor(options), options);
}

class LlamaExpander extends NativeModel<Loaded> implements Expander {
  readonly role = 'expand';
  protected readonly kind = EXPAND_MODEL_KIND;

  constructor(
    runtime: LlmRuntime,
    private readonly expanderOptions: ExpanderOptions,
  ) {
    super(runtime, expanderOptions);
  }

  async load(): Promise<void> {
    await this.ready();
  }

  async expand(query: string, options: { signal?: AbortSignal } = {}): Promise<Expansion[]> {
    const { signal } = options;
    if (signal?.aborted) throw abortedError(signal);
    const loaded = await this.ready(signal);
    const text = await this.run(
      loaded,
      async ({ sequence, grammar, Session, chatWrapper }, callSignal) => {
        const session = new Session({ contextSequence: sequence, autoDisposeSequence: false, chatWrapper });
        try {
          return await session.prompt(PROMPT(query), {
            ...SAMPLING,
            grammar,
            signal: callSignal,
            stopOnAbortSignal: true, // what was generated so far, not an error; dropped below
          });
        } finally {
          session.dispose({ disposeSequence: false });
          await sequence.clearHistory();
        }
      },
      signal,
    );
    if (this.runtime.disposed) throw disposedError();
    if (signal?.aborted) throw abortedError(signal);
    return parseExpansion(text);
  }

  protected beforeCall(signal: AbortSignal): Promise<void> | undefined {
    return this.expanderOptions.beforeExpand?.(signal);
  }

  protected async open(
    model: LlamaModel,
    llama: Llama,
    keep: <T extends { dispose(): Promise<void> | void }>(context: T) => T,
    signal: AbortSignal,
  ): Promise<Loaded> {
    const context = keep(
      await model.createContext({
        contextSize: Math.min(model.trainContextSize, CONTEXT_TOKENS),
        threads: this.runtime.threads,
        createSignal: signal,
      }),
    );
    const grammar = await llama.createGrammar({ grammar: EXPANSION_GRAMMAR });
    const module = await this.runtime.import();
    const { LlamaChatSession: Session, resolveChatWrapper } =
      module.LlamaChatSession && module.resolveChatWrapper
        ? { LlamaChatSession: module.LlamaChatSession, resolveChatWrapper: module.resolveChatWrapper }
        : await import('node-llama-cpp');
    const chatWrapper = resolveChatWrapper(model);
    return { model, sequence: context.getSequence(), grammar, Session, chatWrapper };
  }
}

/** The typed lines of a generated text (a last line cut off by the token limit is kept as far as it got). */
export function parseExpansion(text: string): Expansion[] {
  const lines: Expansion[] = [];
  for (const line of text.split('\n')) {
    const match = /^(lex|vec|hyde):\s*(.+)$/.exec(line.trim());
    const body = match?.[2]?.trim();
    if (match !== null && body) lines.push({ type: match[1] as ExpansionType, text: body });
  }
  return lines;
}
