import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IConfiguration } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The import directions of `npm run lint` (`.dependency-cruiser.cjs`, docs/design.md §4), run
 * on a small tree of fixture files: every forbidden import below is one file that makes it,
 * and the test asserts dependency-cruiser names exactly those files and rules, and passes the
 * imports the rooms are allowed (so a rule made too broad fails here too). The real tree is
 * `npm run lint`'s; this proves the rules would catch a change that breaks them.
 */
const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as IConfiguration;

/** Modules that exist only to be imported. */
const TARGETS = [
  'src/llm/index.ts',
  'src/store/sqlite.ts',
  'src/store/types.ts',
  'src/text/chunks.ts',
  'src/indexing/scan.ts',
  'src/search/query.ts',
  'src/core/reader-types.ts',
  'src/core/open.ts',
  'src/core/writer.ts',
  'src/serve/mcp.ts',
  'src/lifecycle/gate.ts',
  'src/watch/index.ts',
  'src/watch/types.ts',
  'src/core/watch-writer.ts',
  'src/log.ts',
];

/** Imports each room may make: none of these is a violation. */
const ALLOWED: Record<string, string> = {
  'src/core/compose.ts': `import '../llm/index.js';\nimport '../indexing/scan.js';\nimport '../search/query.js';\nimport '../store/sqlite.js';`,
  'src/search/bm25.ts': `import '../store/sqlite.js';\nimport '../text/chunks.js';\nimport '../log.js';`,
  'src/indexing/update.ts': `import '../store/sqlite.js';\nimport '../text/chunks.js';`,
  'src/store/documents.ts': `import '../text/chunks.js';\nimport './sqlite.js';`,
  'src/mcp/tools/query.ts': `import type {} from '../../core/reader-types.js';\nimport '../../lifecycle/gate.js';`,
  'src/serve/serve-mcp.ts': `import '../core/open.js';\nexport const writer = () => import('../core/writer.js');`,
  'src/cli/commands/index-commands.ts': `import '../../core/writer.js';`,
  'src/serve/watching.ts': `import type {} from '../watch/types.js';\nexport const watch = () => import('../watch/index.js');`,
  'src/watch/watcher.ts': `import '../core/watch-writer.js';\nimport '../indexing/scan.js';\nimport '../log.js';`,
  'src/cli/commands/watch-command.ts': `import '../../watch/index.js';`,
  'src/mcp/tools/status.ts': `import type {} from '../../watch/types.js';`,
};

/** One forbidden import per file, and the rules that must name it. */
const FORBIDDEN: Array<{ file: string; source: string; rules: string[] }> = [
  { file: 'src/store/bad-model.ts', source: `import '../llm/index.js';`, rules: ['store-knows-no-model'] },
  {
    file: 'src/store/bad-search.ts',
    source: `import '../search/query.js';`,
    rules: ['store-knows-no-model', 'only-core-composes-indexing-and-search'],
  },
  {
    file: 'src/search/bad-indexing.ts',
    source: `import '../indexing/scan.js';`,
    rules: ['search-is-given-its-models'],
  },
  { file: 'src/search/bad-model.ts', source: `import '../llm/index.js';`, rules: ['search-is-given-its-models'] },
  {
    file: 'src/indexing/bad-search.ts',
    source: `import '../search/query.js';`,
    rules: ['indexing-is-given-its-models'],
  },
  { file: 'src/indexing/bad-model.ts', source: `import '../llm/index.js';`, rules: ['indexing-is-given-its-models'] },
  { file: 'src/text/bad-store.ts', source: `import '../store/sqlite.js';`, rules: ['text-is-pure'] },
  {
    file: 'src/core/bad-server.ts',
    source: `import '../serve/mcp.js';`,
    rules: ['core-composes-the-index-and-nothing-above', 'only-the-cli-starts-a-server'],
  },
  {
    file: 'src/mcp/bad-writer.ts',
    source: `import '../core/writer.js';`,
    rules: ['mcp-uses-the-gate-and-the-reader'],
  },
  {
    file: 'src/mcp/bad-table.ts',
    source: `import type {} from '../store/types.js';`,
    rules: ['mcp-uses-the-gate-and-the-reader'],
  },
  {
    file: 'src/cli/bad-search.ts',
    source: `import '../search/query.js';`,
    rules: ['only-core-composes-indexing-and-search'],
  },
  { file: 'src/serve/bad-writer.ts', source: `import '../core/writer.js';`, rules: ['serve-loads-the-read-side'] },
  { file: 'src/serve/bad-watcher.ts', source: `import '../watch/index.js';`, rules: ['serve-loads-the-read-side'] },
  {
    file: 'src/watch/bad-search.ts',
    source: `import '../search/query.js';`,
    rules: ['watch-follows-folders-through-the-index'],
  },
  {
    file: 'src/watch/bad-model.ts',
    source: `import '../llm/index.js';`,
    rules: ['watch-follows-folders-through-the-index'],
  },
  {
    file: 'src/watch/bad-server.ts',
    source: `import '../serve/mcp.js';`,
    rules: ['watch-follows-folders-through-the-index', 'only-the-cli-starts-a-server'],
  },
  { file: 'src/mcp/bad-watcher.ts', source: `import '../watch/index.js';`, rules: ['only-hosts-load-the-watcher'] },
  {
    file: 'src/core/bad-watcher.ts',
    source: `import '../watch/index.js';`,
    rules: ['core-composes-the-index-and-nothing-above', 'only-hosts-load-the-watcher'],
  },
];

let root: string;

function write(file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), `${text}\n`);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'qmd-lint-'));
  write(
    'tsconfig.json',
    JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }),
  );
  for (const file of TARGETS) write(file, 'export {};');
  for (const [file, text] of Object.entries(ALLOWED)) write(file, `${text}\nexport {};`);
  for (const { file, source } of FORBIDDEN) write(file, `${source}\nexport {};`);
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function violations(): Promise<Array<{ from: string; to: string; rule: string }>> {
  const { output } = await cruise(['src'], {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: join(root, 'tsconfig.json') },
    doNotFollow: { path: 'node_modules' },
  });
  if (typeof output === 'string') throw new Error(`dependency-cruiser gave no result: ${output}`);
  return output.summary.violations.map((v) => ({ from: v.from, to: v.to, rule: v.rule.name }));
}

describe('npm run lint: the directions between the index rooms', () => {
  it('names every forbidden import, by the rule that forbids it, and nothing the rooms may import', async () => {
    const found = await violations();
    // Each file once, with every rule that names it: the room's own rule, and any other its
    // import also breaks (a store file that reaches search is also outside the core).
    const byFile = new Map<string, string[]>();
    for (const { from, rule } of found) byFile.set(from, [...(byFile.get(from) ?? []), rule].sort());
    expect(Object.fromEntries([...byFile].sort(([a], [b]) => a.localeCompare(b)))).toEqual(
      Object.fromEntries(
        FORBIDDEN.map(({ file, rules }) => [file, [...rules].sort()]).sort(([a], [b]) =>
          (a as string).localeCompare(b as string),
        ),
      ),
    );
  }, 60_000);

  it('resolves each import to the module it names (a rule that matched nothing would pass vacuously)', async () => {
    const found = await violations();
    const bad = found.find((v) => v.from === 'src/store/bad-model.ts');
    expect(bad?.to).toBe('src/llm/index.ts');
    expect(found.find((v) => v.from === 'src/search/bad-indexing.ts')?.to).toBe('src/indexing/scan.ts');
  }, 60_000);
});
