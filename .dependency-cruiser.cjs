/**
 * Import directions (docs/design.md, "Architecture"): `npm run lint` fails when an import
 * goes against them. `src/cli/` parses the command line and hands a context to `src/serve/`,
 * which composes everything; everything else points one way:
 *
 *   cli → serve → mcp → lifecycle(gate) ─→ machines → xstate
 *            ↘ relay ↗ ↘ store → llm        ↗
 *   viz → machines          neutral leaves: src/log.ts, src/errors.ts, src/failpoints.ts, src/settle.ts, src/env.ts, src/platform.ts,
 *                          src/jsonrpc.ts, src/lines.ts, src/private-file.ts
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
      to: { path: '^src/(cli|serve|mcp|store|llm|viz)/' },
    },
    {
      name: 'mcp-uses-the-gate-and-the-store-read-api',
      comment: 'src/mcp/ reaches the lifecycle only through the gate and the store only through its types.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: {
        path: '^(src/(cli|serve|viz|llm|lifecycle|store)/|machines/)',
        pathNot: ['^src/lifecycle/gate\\.ts$', '^src/store/types\\.ts$'],
      },
    },
    {
      name: 'store-owns-llm-and-nothing-above',
      comment: 'src/store/ owns src/llm/ and knows nothing of the server, the lifecycle or the CLI.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^(src/(cli|serve|mcp|lifecycle|viz)/|machines/)' },
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
        'src/relay/ is what every MCP client starts with --shared: it must start fast, so it loads no SDK server, store or model (lifecycle and log only).',
      severity: 'error',
      from: { path: '^src/relay/' },
      to: {
        path: '^(src/(cli|serve|mcp|store|llm|viz)/|node_modules/(@modelcontextprotocol|node-llama-cpp|sqlite-vec)/)',
      },
    },
    {
      name: 'viz-draws-the-machines-only',
      comment: 'src/viz/ exports and inspects machines; it does not reach the product.',
      severity: 'error',
      from: { path: '^src/viz/' },
      to: { path: '^src/(cli|serve|mcp|store|llm)/' },
    },
    {
      name: 'neutral-leaves-import-nothing-of-ours',
      comment:
        'src/log.ts, src/errors.ts, src/failpoints.ts, src/settle.ts, src/env.ts, src/platform.ts, src/jsonrpc.ts, src/lines.ts and src/private-file.ts are used by every package, so they use none (but each other).',
      severity: 'error',
      from: { path: '^src/(log|errors|failpoints|settle|env|platform|jsonrpc|lines|private-file)\\.ts$' },
      to: {
        path: '^(src|machines)/',
        pathNot: '^src/(log|errors|failpoints|settle|env|platform|jsonrpc|lines|private-file)\\.ts$',
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
