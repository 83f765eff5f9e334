/**
 * The install path of the README (issue 32): `npm pack`, then `npm i -g` of that tarball into a
 * fresh prefix, as a user installs it, with the npm of the Node running the tests (CI: 22 and
 * 24) and its cache; then the `qmd` that prefix's bin links to, found through PATH as a shell
 * finds it: `--version`, `collection add`, `embed` (the tiny test model: the native addons
 * load from the installed package, not from this repository) and `query`, `qmd mcp`
 * initialized over stdio by the SDK's real Client, and `qmd mcp config`, which names that
 * installed copy. `packed.test.ts` checks what the tarball holds; this checks that npm's
 * installer makes a working `qmd` of it, with only its `dependencies`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { READERS } from '../support/mcp-clients.js';
import { qmdEnv, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
/** The npm beside the Node running the tests (CI puts that Node's bin first on PATH: the same one). */
const NODE_BIN = dirname(process.execPath);
const NPM = existsSync(join(NODE_BIN, 'npm')) ? join(NODE_BIN, 'npm') : 'npm';

const ws = tempWorkspace();
const work = mkdtempSync(join(tmpdir(), 'qmd-install-'));
const prefix = join(work, 'prefix');
let qmdBin = '';
let env: NodeJS.ProcessEnv = {};
/** What `npm i -g` printed on stderr: its warnings. */
let installWarnings = '';

/** npm's own environment: without the npm_* variables `npm test` hands its children. */
function npmEnv(): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) clean[k] = v;
  return { ...clean, PATH: `${NODE_BIN}${delimiter}${process.env.PATH ?? ''}` };
}

beforeAll(() => {
  // --ignore-scripts: `prepare` would rebuild dist/ under the suites running beside this one.
  const [packed] = JSON.parse(
    execFileSync(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: ROOT,
      env: npmEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as Array<{ filename: string }>;
  expect(packed?.filename).toBe(`${pkg.name}-${pkg.version}.tgz`);
  // What the README tells a user to run, into a prefix of its own (`-g --prefix`), from the
  // tarball's own folder: npm resolves the dependencies from the registry (or its cache).
  const install = spawnSync(
    NPM,
    ['install', '--global', '--prefix', prefix, `./${packed?.filename}`, '--no-audit', '--no-fund', '--prefer-offline'],
    { cwd: work, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  expect(install.status, install.stderr).toBe(0);
  installWarnings = install.stderr;
  qmdBin = join(prefix, process.platform === 'win32' ? 'qmd.cmd' : 'bin/qmd');
  // The prefix's bin first on PATH, then the Node under test (the bin's `#!/usr/bin/env node`).
  env = {
    ...qmdEnv(ws.index, { QMD_EMBED_MODEL: tinyModelPath(), QMD_EMBED_THREADS: '1' }),
    PATH: [dirname(qmdBin), NODE_BIN, '/usr/bin', '/bin'].join(delimiter),
  };
}, 600_000);

afterAll(() => {
  ws.cleanup();
  rmSync(work, { recursive: true, force: true });
});

/** `qmd ARGS` as a shell runs it: by name, through PATH. */
async function qmd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnProcess('qmd', args, { env });
  p.child.stdin?.end();
  const exit = await p.closed;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}

describe(`npm i -g ${pkg.name}-${pkg.version}.tgz into a fresh prefix`, () => {
  it(`npm names no script of ${pkg.name} to allow (none runs on install; the build is prepack's)`, () => {
    // npm 11 lists every install-time script (preinstall, install, postinstall, prepare) it did
    // not run, under "install-scripts"; node-llama-cpp's postinstall is there, and needed by
    // nothing (docs/design.md §6).
    expect(installWarnings).not.toContain(`${pkg.name}@${pkg.version}`);
    const scripts =
      (
        JSON.parse(readFileSync(join(prefix, 'lib/node_modules', pkg.name, 'package.json'), 'utf8')) as {
          scripts?: Record<string, string>;
        }
      ).scripts ?? {};
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(scripts[hook], hook).toBeUndefined();
  });

  it('links qmd into the prefix’s bin, to the installed bundle, with only the dependencies installed', () => {
    const installed = join(prefix, 'lib/node_modules', pkg.name);
    expect(realpathSync(qmdBin)).toBe(join(installed, 'dist/qmd.mjs'));
    expect(existsSync(join(installed, 'node_modules/vitest')), 'no devDependencies').toBe(false);
  });

  it('qmd --version, collection add, embed, query: the CLI runs from the installed copy', async () => {
    const version = await qmd(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });

    const added = await qmd(['collection', 'add', ws.notesDir, '--name', 'notes']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/Added collection notes .*: \d+ files? scanned/);

    const embedded = await qmd(['embed', '--json']);
    expect(embedded.code, embedded.stderr).toBe(0);
    expect(JSON.parse(embedded.stdout)).toMatchObject({ embedded: expect.any(Number) });
    expect(JSON.parse(embedded.stdout).embedded).toBeGreaterThan(0);

    const found = await qmd(['query', 'sourdough starter', '--json', '--explain']);
    expect(found.code, found.stderr).toBe(0);
    const results = JSON.parse(found.stdout) as Array<{ file: string; explain: { mode: string } }>;
    // Hybrid: BM25 fused with the (random-weight) tiny model's vectors, so the note is found, at a rank the model decides.
    expect(results[0]?.explain.mode).toBe('hybrid');
    expect(results.map((r) => r.file)).toContain('qmd://notes/deep/cooking.md');
  });

  it('qmd mcp: the SDK’s Client initializes over stdio, queries, and the server leaves with exit 0', async () => {
    const server = spawnProcess('qmd', ['mcp'], { env, keepStdout: false });
    try {
      const transport = new ChildTransport(server.child);
      const client = new Client({ name: 'installed', version: '1.0.0' });
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({ name: 'qmd', version: pkg.version });
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      const { mode, results } = found.structuredContent as { mode: string; results: Array<{ file: string }> };
      expect(mode).toBe('hybrid');
      expect(results.map((r) => r.file)).toContain('notes/deep/cooking.md');
      await transport.close();
      expect(await waitForExit(server), server.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      server.kill();
    }
  });

  it('qmd mcp config names this Node and the installed qmd by absolute path', async () => {
    const config = await qmd(['mcp', 'config', '--client', 'claude-desktop']);
    expect(config.code, config.stderr).toBe(0);
    const launch = READERS['claude-desktop']?.(config.stdout, 'qmd');
    expect(launch).toMatchObject({
      command: process.execPath,
      args: [
        join(prefix, 'lib/node_modules', pkg.name, 'dist/qmd.mjs'),
        '--index',
        ws.index,
        '--embed-model',
        tinyModelPath(),
        'mcp',
      ],
    });
  });
});
