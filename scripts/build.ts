/**
 * `npm run build`: bundles the CLI with esbuild into `dist/`, one ESM file per entry, plus the
 * chunks its lazy `import()`s become, plus `qmd mcp`'s code-cached CommonJS script. `bin.qmd`
 * in package.json runs `dist/qmd.mjs` directly.
 *
 *   npx tsx scripts/build.ts            # dist/qmd.mjs, dist/chunks/*.mjs (+ .map), dist/chunks/qmd-mcp-*.cjs
 *   npx tsx scripts/build.ts --analyze  # also prints what each output is made of
 *
 * Why a bundle (start-up time, README's goals): `qmd mcp` loaded 197 modules through Node's ESM loader before it
 * could answer `initialize` (97 of them zod's), and resolving, reading and linking them cost
 * more than running them. One file per entry answered in 0.97× the bare SDK server's time
 * where the tsc output took 1.37× (15 interleaved rounds each, Node 20, load ~7).
 *
 * Type checking stays with `tsc` (`npm run typecheck`); esbuild only strips types.
 */
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { analyzeMetafile, type BuildOptions, build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The programs we ship. Each becomes `dist/<name>.mjs`; whatever they `import()` lazily becomes
 * a chunk under `dist/chunks/`, shared between entries, loaded only when that code runs. A new
 * entry (a relay that must start fast, say) is one more line here and, if users run it, a
 * `bin` in package.json. Keep an entry's static imports to what its first answer needs: they
 * all load before its first line runs.
 */
export const ENTRIES: ReadonlyArray<{ name: string; source: string }> = [
  { name: 'qmd', source: 'src/cli/main.ts' },
  // `qmd mcp`'s query worker (docs/design.md §8.4): a worker_threads script, found beside the
  // bundle by `bundledWorkerScript` (src/search/query-worker-client.ts).
  { name: 'query-worker', source: 'src/search/query-worker.ts' },
];

/**
 * Native addons stay in node_modules: esbuild cannot bundle a `.node` file. node-llama-cpp finds
 * its binaries and sqlite-vec its `vec0` library relative to their own packages, so both stay
 * there whole. better-sqlite3 is external as a package too (an `import` of it never pulls it
 * in), but its JS is bundled and only its addon is loaded from the package (`bundledSqlite`).
 */
export const EXTERNAL = ['better-sqlite3', 'sqlite-vec', 'node-llama-cpp'];

const betterSqlite = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
const betterSqliteVersion = (JSON.parse(readFileSync(`${betterSqlite}/package.json`, 'utf8')) as { version: string })
  .version;

/**
 * better-sqlite3's JS inside the bundle: `src/store/sqlite.ts` gets `binding/load-bundled.ts`
 * in place of `binding/load.ts`, which imports the package's `lib/database.js` and
 * `lib/sqlite-error.js` (not in its `exports`: resolved here by path) and loads only the addon
 * from the installed package, found at run time. Loading the package through Node cost every
 * `qmd mcp` start its 15 CommonJS files (docs/design.md §5, "Start-up"). The version bundled is
 * defined for the run-time check that the installed addon is the same one.
 */
const bundledSqlite: Plugin = {
  name: 'qmd-bundled-sqlite',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/binding\/load\.js$/ }, (args) =>
      args.importer === `${root}src/store/sqlite.ts` ? { path: `${root}src/store/binding/load-bundled.ts` } : undefined,
    );
    pluginBuild.onResolve({ filter: /^better-sqlite3\/lib\/[a-z-]+\.js$/ }, (args) => ({
      path: `${betterSqlite}/${args.path.slice('better-sqlite3/'.length)}`,
    }));
  },
};

/**
 * The SDK picks its JSON Schema validator through `@modelcontextprotocol/server/_shims`, whose
 * Node variant imports the SDK's bundled ajv and runs ajv's module code at import time, though
 * qmd never validates a JSON Schema (its tools declare zod schemas; the validator serves
 * elicitation, which qmd does not use). This swaps in `src/mcp/sdk-shims.ts`: the same exports,
 * with a validator that loads the SDK's real one on first use.
 */
const lazyAjv: Plugin = {
  name: 'qmd-lazy-ajv',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({
      path: `${root}src/mcp/sdk-shims.ts`,
    }));
  },
};

/**
 * How every bundle is made, wherever it is written: `bench/triggers.ts` builds its baseline
 * (the modules `qmd mcp` loads, and nothing that runs them) with these too.
 */
export const BUNDLE_OPTIONS = {
  absWorkingDir: root,
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  // Node 20's syntax though qmd needs 22: an older Node must parse dist/qmd.mjs far enough
  // to say which Node it needs (src/cli/node-check.ts; test/e2e/old-node.test.ts runs it).
  target: 'node20',
  external: EXTERNAL,
  plugins: [lazyAjv, bundledSqlite],
  define: { __QMD_BETTER_SQLITE3_VERSION__: JSON.stringify(betterSqliteVersion) },
  // Bundled CommonJS (commander, ws…) calls `require` for node's own modules; ESM has none.
  banner: {
    js: "import { createRequire as __qmdCreateRequire } from 'node:module';\nconst require = __qmdCreateRequire(import.meta.url);",
  },
  // Stack traces under --debug name src/ files (main.ts turns source maps on only then).
  // Without sourcesContent: the mappings are what a trace needs, and dist/ stays small.
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'inline',
  logLevel: 'warning',
} satisfies BuildOptions;

/**
 * In the script, `import('node-llama-cpp')` becomes `__qmdImport('node-llama-cpp')`, the
 * caller's import() that src/cli/code-cache.ts hands the script: a vm.Script cannot run
 * import() ("A dynamic import callback was not specified", Node 20, 22 and 24). The
 * externals are the only modules the script imports; the bundle holds the rest.
 */
const importThroughLoader: Plugin = {
  name: 'qmd-import-through-loader',
  setup(pluginBuild) {
    const externals = EXTERNAL.map((name) => name.replace(/[-/]/g, '\\$&')).join('|');
    // Calls only: `typeof import('node-llama-cpp')` in a type is left to esbuild to erase.
    const call = new RegExp(`(?<!typeof\\s*)\\bimport\\((['"])(${externals})\\1\\)`, 'g');
    const ours = new RegExp(`^${`${root}src/`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*\\.ts$`);
    pluginBuild.onLoad({ filter: ours }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replace(call, '__qmdImport($1$2$1)'),
      loader: 'ts',
    }));
  },
};

/**
 * Command lines that must answer fast also get their code as one CommonJS script, which
 * `src/cli/code-cache.ts` runs with a V8 code cache (cheaper than Node's compile cache for the
 * ES chunks, measured on Node 22):
 * `dist/chunks/<name>-<hash>.cjs`, the hash because V8 checks a cache against the source's
 * length only. The ES build learns the file's name as the constant `define`, relative to the
 * chunk that loads it (src/cli/fast-path.ts: always in dist/chunks/). Another fast command
 * line (a relay, say) is one more line here and one more fast path.
 */
export const CACHED_SCRIPTS: ReadonlyArray<{ name: string; source: string; define: string }> = [
  { name: 'qmd-mcp', source: 'src/serve/mcp.ts', define: '__QMD_MCP_SCRIPT__' },
];

/** Builds one of CACHED_SCRIPTS with the bundle's options, unsplit; returns its file name. */
async function bundleScript(outdir: string, entry: { name: string; source: string }): Promise<string> {
  const result = await build({
    ...BUNDLE_OPTIONS,
    entryPoints: [{ in: entry.source, out: entry.name }],
    outdir: `${outdir}/chunks`,
    entryNames: '[name]-[hash]',
    outExtension: { '.js': '.cjs' },
    splitting: false,
    format: 'cjs',
    // The script has a CommonJS `require`; `import.meta.url` becomes its own file's URL.
    banner: { js: "const __qmdImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { ...BUNDLE_OPTIONS.define, 'import.meta.url': '__qmdImportMetaUrl' },
    // --debug runs the ES chunks, whose maps name src/: the script needs none.
    sourcemap: false,
    plugins: [...BUNDLE_OPTIONS.plugins, importThroughLoader],
    metafile: true,
  });
  const [script] = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.cjs'));
  if (script === undefined) throw new Error(`${entry.source}: no script was written`);
  const left = /\bimport\((?!\s*\))/.exec(readFileSync(`${root}${script}`, 'utf8'));
  if (left !== null) throw new Error(`${script} still calls import() (${left.index}): route it through __qmdImport`);
  return basename(script);
}

/**
 * `text` with every character outside ASCII written as its `\u` escape. esbuild escapes them in
 * strings, regular expressions and names (its default `charset: 'ascii'`) but leaves comments
 * as written, and the packages' comments and ours carry "—", "’", "→". One such
 * character in a file makes Node read it as UTF-8 into a two-byte string: `qmd mcp`'s 1.7 MB
 * script cost ~20 ms of CPU per start to read instead of ~13 (docs/design.md §5, "Start-up").
 * In a comment an escape only changes the spelling; in a string or a regular expression (none
 * is left there by esbuild) it means the same character.
 */
export function asciiOnly(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Rewrites every script under `dir` (.mjs, .cjs) in ASCII (`asciiOnly`); their maps stay true but for columns after a comment. */
function writeAscii(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.[cm]js$/.test(entry.name)) continue;
    const file = `${entry.parentPath}/${entry.name}`;
    const text = readFileSync(file, 'utf8');
    const ascii = asciiOnly(text);
    if (ascii !== text) writeFileSync(file, ascii);
  }
}

export async function bundle(options: { analyze?: boolean } = {}): Promise<void> {
  const outdir = `${root}dist`;
  rmSync(outdir, { recursive: true, force: true });
  const define: Record<string, string> = {};
  for (const script of CACHED_SCRIPTS)
    define[script.define] = JSON.stringify(`./${await bundleScript(outdir, script)}`);
  const result = await build({
    ...BUNDLE_OPTIONS,
    entryPoints: ENTRIES.map((entry) => ({ in: entry.source, out: entry.name })),
    outdir,
    define: { ...BUNDLE_OPTIONS.define, ...define },
    metafile: true,
  });
  writeAscii(outdir);
  for (const entry of ENTRIES) chmodSync(`${outdir}/${entry.name}.mjs`, 0o755);
  if (options.analyze) process.stdout.write(await analyzeMetafile(result.metafile));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bundle({ analyze: process.argv.includes('--analyze') });
}
