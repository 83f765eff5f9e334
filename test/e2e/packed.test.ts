/**
 * The package as npm ships it: `npm pack` (what `files` puts in the tarball), unpacked into a
 * temp directory whose node_modules holds the dependencies (a link to ours: the tarball's own
 * contents are under test, not npm's installer), and run through package.json's `bin`. The
 * other spawned suites run the same bundle from the working tree; this one catches what only
 * packing can break: a chunk, a source map or a file the bundle reads left out of `files`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ws = tempWorkspace();
let unpacked = '';
let pkgDir = '';
let bin = '';
let files: string[] = [];

beforeAll(() => {
  unpacked = mkdtempSync(join(tmpdir(), 'qmd-packed-'));
  // --ignore-scripts: `prepare` would rebuild dist/ under the suites running beside this one.
  const report = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', unpacked], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const packed = report[0]!;
  files = packed.files.map((f) => f.path);
  execFileSync('tar', ['-xzf', join(unpacked, packed.filename), '-C', unpacked]);
  pkgDir = join(unpacked, 'package');
  symlinkSync(join(ROOT, 'node_modules'), join(pkgDir, 'node_modules'), 'dir');
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { bin: { qmd: string } };
  bin = join(pkgDir, pkg.bin.qmd);
}, 120_000);

afterAll(() => {
  ws.cleanup();
  rmSync(unpacked, { recursive: true, force: true });
});

const run = (args: string[], env = qmdEnv(ws.index), node = process.execPath) => {
  const p = spawnProcess(node, [bin, ...args], { env });
  p.child.stdin?.end();
  return waitForExit(p).then((exit) => ({ ...exit, stdout: p.stdout(), stderr: p.stderr() }));
};

/** Every file under `dir`, relative to it. */
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)).map((f) => join(entry.name, f)) : [entry.name],
  );
}

describe('the packed package', () => {
  it('ships the bundle with its chunks and source maps, an executable bin, and no sources', () => {
    expect(files).toContain(relative(pkgDir, bin));
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    for (const file of files) {
      expect(file, 'only dist/ and the files npm always adds').toMatch(/^(dist\/|package\.json$|README\.md$)/);
      expect(file).not.toMatch(/\.ts$/);
    }
    const scripts = files.filter((f) => f.endsWith('.mjs'));
    expect(scripts.length).toBeGreaterThan(1);
    // The ES modules have maps for --debug; qmd mcp's code-cached script runs without --debug only.
    for (const script of scripts) expect(files, `${script}'s source map`).toContain(`${script}.map`);
  });

  it("ships every script in ASCII: one other character, even in a comment, makes Node read the whole file into a two-byte string (scripts/build.ts's asciiOnly)", () => {
    const scripts = files.filter((f) => /\.[cm]js$/.test(f));
    expect(scripts.filter((f) => f.endsWith('.cjs'))).toHaveLength(1);
    const wide = scripts.filter((f) => /[\u0080-\uffff]/.test(readFileSync(join(pkgDir, f), 'utf8')));
    expect(wide).toEqual([]);
  });

  it('holds every module the bundle imports by a relative path, lazy chunks included', () => {
    const missing: string[] = [];
    for (const script of walk(join(pkgDir, 'dist')).filter((f) => f.endsWith('.mjs'))) {
      const text = readFileSync(join(pkgDir, 'dist', script), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import\()\s*["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = join(dirname(join(pkgDir, 'dist', script)), specifier as string);
        if (!existsSync(target)) missing.push(`${script} → ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("leaves the SDK's bundled ajv out (src/mcp/sdk-shims.ts loads it on first use)", () => {
    const shipped = files.filter((f) => f.endsWith('.mjs')).map((f) => readFileSync(join(pkgDir, f), 'utf8'));
    expect(shipped.some((text) => text.includes('McpServer'))).toBe(true);
    expect(shipped.filter((text) => /\bAjv2020\b/.test(text))).toEqual([]);
  });

  it('serves MCP: initialize, a query, then stdin EOF ends it through the machine with exit 0', async () => {
    const added = await run(['collection', 'add', ws.notesDir, '--name', 'notes']);
    expect(added.code, added.stderr).toBe(0);
    const server = spawnProcess(process.execPath, [bin, 'mcp'], { env: qmdEnv(ws.index) });
    try {
      const transport = new ChildTransport(server.child);
      const client = new Client({ name: 'packed', version: '1.0.0' });
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({
        name: 'qmd',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      });
      expect(client.getInstructions()).toContain('"notes"');
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      expect((found.structuredContent as { results: Array<{ file: string }> }).results[0]?.file).toBe(
        'notes/deep/cooking.md',
      );
      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toContain('Shutting down (stdin closed)...');
      // Nothing but JSON-RPC reached stdout.
      for (const line of transport.lines.filter((l) => l !== '')) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      server.kill();
    }
  });

  it('runs qmd mcp from its code-cached script: the first start writes the V8 cache, the next takes it', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'qmd-cache-'));
    const cacheDir = join(cache, 'qmd', 'compile-cache');
    const start = async () => {
      const server = spawnProcess(process.execPath, [bin, 'mcp'], {
        env: { ...qmdEnv(ws.index), XDG_CACHE_HOME: cache },
      });
      try {
        const client = new Client({ name: 'packed-cache', version: '1.0.0' });
        const transport = new ChildTransport(server.child);
        await client.connect(transport);
        await client.callTool({ name: 'status', arguments: {} });
        await transport.close();
        expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      } finally {
        server.kill();
      }
    };
    try {
      const script = files.find((f) => /^dist\/chunks\/qmd-mcp-\w+\.cjs$/.test(f));
      expect(script, 'the script is shipped').toBeDefined();
      await start();
      const written = walk(cacheDir).filter((f) => f.endsWith('.v8'));
      expect(written).toEqual([`${script?.slice('dist/chunks/'.length)}.${process.version}-${process.arch}.v8`]);
      const mtime = statSync(join(cacheDir, written[0] as string)).mtimeMs;
      await start();
      // A cache V8 refused would have been written again as the process left.
      expect(statSync(join(cacheDir, written[0] as string)).mtimeMs).toBe(mtime);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('names the TypeScript sources in --debug stack traces (source maps), and prints one line without', async () => {
    const quiet = await run(['get', 'notes/missing.md']);
    expect(quiet.code).toBe(1);
    expect(quiet.stderr.trim().split('\n')).toHaveLength(1);
    const debug = await run(['--debug', 'get', 'notes/missing.md']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\bat .*src\/store\/\w+\.ts:\d+/);
    expect(debug.stderr).not.toMatch(/\bat .*chunks\/[\w-]+\.mjs:\d+/);
  });

  it('keeps a compile cache under $XDG_CACHE_HOME/qmd, used by the next start', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'qmd-cache-'));
    try {
      const env = { ...qmdEnv(ws.index), XDG_CACHE_HOME: cache };
      const first = await run(['--version'], env);
      expect(first).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
      const written = walk(join(cache, 'qmd', 'compile-cache'));
      expect(written.length).toBeGreaterThan(0);
      // Node's own trace of its compile cache (measured on 22.23.5 and 24.22.3).
      const second = await run(['--version'], { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
      expect(second.code).toBe(0);
      // Node 22: "cache for file://…"; Node 24: "V8 code cache for ESM file://…".
      expect(second.stderr).toMatch(/cache for (ESM )?file:\/\/\S+\/dist\/chunks\/\S+\.mjs was accepted/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
