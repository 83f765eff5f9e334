/**
 * The variables that change what qmd does, for `qmd doctor`: each one that is set, with what it
 * changes. A variable a client strips or a shell forgets is the commonest "works in my terminal,
 * not in my client" (docs/design.md §6, "qmd doctor"), so doctor names every one it finds. A
 * secret is never printed: only that it is set.
 */
export interface Override {
  name: string;
  /** The value, shortened; `(set; not shown)` for a secret. */
  value: string;
  means: string;
}

/** What each variable qmd (or a library it loads) reads does, in the words doctor prints. */
const KNOWN: ReadonlyArray<readonly [name: string, means: string]> = [
  ['QMD_INDEX', 'the index every command uses unless --index names one'],
  ['INDEX_PATH', 'qmd 2.x’s name for QMD_INDEX (QMD_INDEX wins when both are set)'],
  ['QMD_EMBED_MODEL', 'the embedding model (searches use it instead of the one the index was embedded with)'],
  ['QMD_RERANK_MODEL', 'the reranking model of query (off turns it off)'],
  ['QMD_EXPAND_MODEL', 'the query expansion model (off turns it off)'],
  ['QMD_GENERATE_MODEL', 'qmd 2.x’s name for QMD_EXPAND_MODEL'],
  ['QMD_GPU', 'the llama.cpp backend (auto, off, metal, cuda, vulkan)'],
  ['QMD_EMBED_THREADS', 'llama.cpp threads for embeddings'],
  ['QMD_SHARED', 'qmd mcp relays to the shared server, as --shared'],
  ['QMD_SHARED_IDLE_MS', 'how long the shared server waits with no client before it leaves'],
  ['QMD_SHARED_CONNECT_MS', 'how long a relay waits for a shared server before it serves alone'],
  ['QMD_SHARED_REJOIN_MS', 'how soon a relay serving alone tries the shared server again'],
  ['QMD_SHARED_SILENCE_MS', 'how long a relay waits on a silent shared server before it leaves it'],
  ['QMD_HTTP_TOKEN', 'the bearer token of qmd mcp --http'],
  ['QMD_DRAIN_TIMEOUT_MS', 'how long a server lets running requests finish when its client leaves'],
  ['QMD_STEP_TIMEOUT_MS', 'the bound on each step of a server’s shutdown'],
  ['QMD_EXIT_WATCHDOG_MS', 'the last-resort exit bound of a server'],
  ['QMD_LIFECYCLE_TRACE', 'every server writes its lifecycle trace to this file'],
  ['QMD_SHARED_TRACE', 'the shared server writes its trace to this file'],
  ['QMD_INSPECT', 'servers send their machines to a Stately inspector'],
  ['QMD_QUERY_WORKER', 'whether searches run in the query worker'],
  ['QMD_DEBUG_EMBED', 'prints each step of embedding on stderr'],
  ['QMD_FAILPOINTS', 'failure injection, for tests only: should not be set in normal use'],
  ['QMD_CONFIG_DIR', 'where qmd 2.x’s index.yml is read by qmd migrate'],
  ['XDG_CACHE_HOME', 'moves the default index, the models and the compile cache'],
  ['XDG_CONFIG_HOME', 'moves the qmd 2.x configuration qmd migrate reads'],
  ['XDG_RUNTIME_DIR', 'only where an older qmd’s servers are looked for (the place itself is /tmp/qmd-<uid>)'],
  ['TMPDIR', 'only where an older qmd’s servers are looked for'],
  ['HF_ENDPOINT', 'where hf: models are downloaded from'],
  ['MODEL_ENDPOINT', 'where hf: models are downloaded from (before HF_ENDPOINT)'],
  ['HF_TOKEN', 'the Hugging Face token sent with model downloads'],
  ['NODE_LLAMA_CPP_LOG_LEVEL', 'how much llama.cpp logs'],
  ['NODE_OPTIONS', 'flags given to every Node process, qmd’s servers and workers too'],
  ['NO_COLOR', 'no colours (qmd prints none anyway)'],
];

const SECRET = /TOKEN|SECRET|PASSWORD|KEY$/;

/**
 * Every variable of `KNOWN` that is set (non-blank), in that order, then any other `QMD_*`
 * (named, with no known meaning: a typo, or a variable of a newer or older qmd).
 */
export function environmentOverrides(env: NodeJS.ProcessEnv): Override[] {
  const found: Override[] = [];
  const known = new Set(KNOWN.map(([name]) => name));
  for (const [name, means] of KNOWN) {
    const value = env[name]?.trim();
    if (value) found.push({ name, value: shown(name, value), means });
  }
  for (const name of Object.keys(env).sort()) {
    const value = env[name]?.trim();
    if (!name.startsWith('QMD_') || known.has(name) || !value) continue;
    const means = name.startsWith('QMD_TEST_')
      ? 'for tests only: should not be set in normal use'
      : 'not a variable this qmd reads (a typo, or another version’s?)';
    found.push({ name, value: shown(name, value), means });
  }
  return found;
}

function shown(name: string, value: string): string {
  if (SECRET.test(name)) return '(set; not shown)';
  return value.length > 96 ? `${value.slice(0, 93)}...` : value;
}
