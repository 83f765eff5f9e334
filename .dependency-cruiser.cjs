/**
 * Import directions (docs/design.md, "Architecture"): `npm run lint` fails when an import
 * goes against them. `src/cli/` parses the command line and hands a context to `src/serve/`,
 * which composes the server; the index is composed in one place, `src/core/`; everything
 * else points one way:
 *
 *   cli → serve → mcp → lifecycle(gate) ─→ machines → xstate
 *    │      │ ↘ relay ↗
 *    │      └┄┄→ watch ─→ core, indexing (the watcher: loaded by import() only)
 *    └──────┴→ core ─→ indexing ─→ store → text
 *                 │  ↘ search ───↗
 *                 └→ llm
 *   viz → machines          neutral leaves: src/log.ts, src/errors.ts, src/failpoints.ts, src/settle.ts, src/env.ts, src/platform.ts,
 *                          src/jsonrpc.ts, src/lines.ts, src/private-file.ts, src/sigint.ts, src/node-flags.ts
 *
 * `src/core/` is the composition root of the index: the only room that imports both the
 * models (`src/llm/`) and the rooms they are given to (indexing, search). test/lint/ proves
 * that each rule of the index's rooms rejects a forbidden import.
 *
 * dependency-cruiser 17.x, pinned: it runs on Node 20.12+ (18.x needs Node 22).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'machines-are-pure',
      comment: 'machines/ imports only xstate: no node: modules, no SDK, nothing of ours.',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', '^node_modules/xstate/'] },
    },
    {
      name: 'lifecycle-knows-no-product',
      comment: 'src/lifecycle/ hosts the machine; its teardown steps are injected, so it imports no product module.',
      severity: 'error',
      from: { path: '^src/lifecycle/' },
      to: { path: '^src/(cli|serve|mcp|core|indexing|search|store|text|llm|viz)/' },
    },
    {
      name: 'mcp-uses-the-gate-and-the-reader',
      comment:
        "src/mcp/ reaches the lifecycle only through the gate and the index only through the reader facade's types (src/core/reader-types.ts): a tool never sees the writer, a model or a table.",
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: {
        path: '^(src/(cli|serve|viz|llm|lifecycle|core|indexing|search|store|text)/|machines/)',
        pathNot: ['^src/lifecycle/gate\\.ts$', '^src/core/reader-types\\.ts$'],
      },
    },
    {
      name: 'core-composes-the-index-and-nothing-above',
      comment:
        'src/core/ builds the reader and the writer from options and the models; it knows nothing of the server, the lifecycle or the CLI.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^(src/(cli|serve|mcp|lifecycle|viz|relay|peer|watch)/|machines/)' },
    },
    {
      name: 'indexing-is-given-its-models',
      comment:
        'src/indexing/ decides what gets in (scan, ignore rules, the write phase, chunks and their vectors) through an embedder it is given: it imports no model, no search and nothing above the index.',
      severity: 'error',
      from: { path: '^src/indexing/' },
      to: { path: '^(src/(llm|search|core|cli|serve|mcp|lifecycle|viz|relay|peer|watch)/|machines/)' },
    },
    {
      name: 'search-is-given-its-models',
      comment:
        'src/search/ answers queries (BM25, vectors, fusion, expansion, reranking, the query worker) with the models handed to it as functions: it imports no model, no indexing and nothing above the index.',
      severity: 'error',
      from: { path: '^src/search/' },
      to: { path: '^(src/(llm|indexing|core|cli|serve|mcp|lifecycle|viz|relay|peer|watch)/|machines/)' },
    },
    {
      name: 'store-knows-no-model',
      comment:
        'src/store/ is the SQLite file and its rows (binding, schema, migrations, collections, documents, contexts, vectors): it knows no model and nothing that uses it.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^(src/(llm|indexing|search|core|cli|serve|mcp|lifecycle|viz|relay|peer|watch)/|machines/)' },
    },
    {
      name: 'text-is-pure',
      comment: "src/text/ is a note's text (titles, lines, chunks, prompt formats): pure functions, nothing of ours.",
      severity: 'error',
      from: { path: '^src/text/' },
      to: { path: '^(src|machines)/', pathNot: '^src/text/' },
    },
    {
      name: 'only-core-composes-indexing-and-search',
      comment:
        "The rest of the product reaches indexing and search through src/core/'s facades, which give them their models.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(core|indexing|search|watch)/' },
      to: { path: '^src/(indexing|search)/' },
    },
    {
      name: 'watch-follows-folders-through-the-index',
      comment:
        'src/watch/ turns file events into index writes: it uses the write steps and rules of src/indexing/ and the writer core composes beside a served reader (src/core/watch-writer.ts), never search, a model or anything above the index.',
      severity: 'error',
      from: { path: '^src/watch/' },
      to: { path: '^(src/(search|llm|cli|serve|mcp|lifecycle|viz|relay|peer)/|machines/)' },
    },
    {
      name: 'only-hosts-load-the-watcher',
      comment:
        "The watcher is hosted by the serving roots (src/serve/, by import()) and `qmd update --watch` (src/cli/); anything else may read only its contract's types (src/watch/types.ts).",
      severity: 'error',
      from: { path: '^(src|machines)/', pathNot: '^src/(cli|serve|watch)/' },
      to: { path: '^src/watch/', pathNot: '^src/watch/types\\.ts$' },
    },
    {
      name: 'serve-loads-the-read-side',
      comment:
        'qmd mcp starts on the read side alone (src/core/open.ts, openReader): the writer (src/core/index.ts, store.ts, writer.ts, watch-writer.ts), src/indexing/ and the watcher (src/watch/, but for its contract types.ts) may reach src/serve/ only by a dynamic import(), loaded when first used.',
      severity: 'error',
      from: { path: '^src/serve/' },
      to: {
        path: '^src/(core/(index|store|writer|watch-writer)\\.ts$|indexing/|watch/)',
        pathNot: '^src/watch/types\\.ts$',
        dependencyTypesNot: ['dynamic-import', 'type-only'],
      },
    },
    {
      name: 'llm-imports-only-the-log',
      comment:
        'src/llm/ wraps node-llama-cpp and imports nothing of ours but the neutral log, settle, env and private-file.',
      severity: 'error',
      from: { path: '^src/llm/' },
      to: { path: '^(src/|machines/)', pathNot: ['^src/llm/', '^src/(log|settle|env|private-file)\\.ts$'] },
    },
    {
      name: 'relay-loads-no-server',
      comment:
        'src/relay/ is what every MCP client starts with --shared: it must start fast, so it loads no SDK server, index or model (lifecycle and log only).',
      severity: 'error',
      from: { path: '^src/relay/' },
      to: {
        path: '^(src/(cli|serve|mcp|core|indexing|search|store|text|llm|viz)/|node_modules/(@modelcontextprotocol|node-llama-cpp|sqlite-vec|better-sqlite3)/)',
      },
    },
    {
      name: 'viz-draws-the-machines-only',
      comment: 'src/viz/ exports and inspects machines; it does not reach the product.',
      severity: 'error',
      from: { path: '^src/viz/' },
      to: { path: '^src/(cli|serve|mcp|core|indexing|search|store|text|llm)/' },
    },
    {
      name: 'neutral-leaves-import-nothing-of-ours',
      comment:
        'src/log.ts, src/errors.ts, src/failpoints.ts, src/settle.ts, src/env.ts, src/platform.ts, src/jsonrpc.ts, src/lines.ts, src/private-file.ts, src/sigint.ts and src/node-flags.ts are used by every package, so they use none (but each other).',
      severity: 'error',
      from: {
        path: '^src/(log|errors|failpoints|settle|env|platform|jsonrpc|lines|private-file|sigint|node-flags)\\.ts$',
      },
      to: {
        path: '^(src|machines)/',
        pathNot: '^src/(log|errors|failpoints|settle|env|platform|jsonrpc|lines|private-file|sigint|node-flags)\\.ts$',
      },
    },
    {
      name: 'only-cli-imports-cli',
      comment:
        'src/cli/ parses the command line: nothing below it may reach back up, but for what src/serve/ is handed by it (the next rule).',
      severity: 'error',
      from: { path: '^(src|machines)/', pathNot: '^src/(cli|serve)/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'serve-takes-a-context-not-the-parser',
      comment:
        'src/serve/ holds the composition roots of qmd mcp: from src/cli/ it takes only what every command is given (its context and configuration, the error report of runAction, the version, the embedding and query model options), never the argument parser.',
      severity: 'error',
      from: { path: '^src/serve/' },
      to: {
        path: '^src/cli/',
        pathNot: '^src/cli/(context|config|action|version|embed-model|query-models)\\.ts$',
      },
    },
    {
      name: 'only-the-cli-starts-a-server',
      comment: 'src/serve/ is reached from the command line only.',
      severity: 'error',
      from: { path: '^(src|machines)/', pathNot: '^src/(cli|serve)/' },
      to: { path: '^src/serve/' },
    },
    {
      name: 'product-never-imports-tests',
      severity: 'error',
      from: { path: '^(src|machines)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-cycles',
      comment: 'A cycle of type-only imports erases at compile time and is allowed.',
      severity: 'error',
      from: { path: '^(src|machines)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
