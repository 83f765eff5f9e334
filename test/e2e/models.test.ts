/**
 * The GPU choice and the three models through the built binary, on this machine, which has
 * no GPU: `--gpu`/`QMD_GPU` fall back to the CPU with their one line and answer as before;
 * `qmd status` and the MCP `status` tool say where llama.cpp runs and what each model is; the
 * peer's default models, not downloaded, make notes and no load; `qmd pull` fetches what is
 * configured; and the three tiny generated models answer a `query` over MCP, expanded and
 * reranked, `rerank: false` giving the fusion's order.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/cli/formats/collections.js';
import { tinyModelPath } from '../support/gguf.js';
import { keywordRerankerPath, tinyGeneratorPath, tinyRerankerPath } from '../support/gguf-models.js';
import { qmdEnv, runQmd, tempWorkspace, textOf } from '../support/qmd.js';
import { sdkSession } from '../support/sdk-session.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const NO_GPU_LINE =
  'QMD: no GPU found (no Metal, CUDA or Vulkan driver detected): llama.cpp runs on the CPU. --gpu off (or QMD_GPU=off) skips looking.';

/** Six notes BM25 ranks in this order for "bread"; the last says "sourdough" four times. */
const NOTES: Record<string, string> = {
  'a.md': '# A\n\nbread bread bread bread bread.\n',
  'b.md': '# B\n\nbread bread bread bread, and a knife.\n',
  'c.md': '# C\n\nbread bread bread, a knife and a board.\n',
  'd.md': '# D\n\nbread bread, a knife, a board and a cloth.\n',
  'e.md': '# E\n\nbread, a knife, a board, a cloth and a tin.\n',
  'f.md': `# F\n\nA loaf of bread. ${'sourdough '.repeat(4)}starter, flour, water and salt, a knife, a board, a cloth and a tin.\n`,
};
const ws = tempWorkspace(NOTES);
const env = (extra: Record<string, string> = {}) =>
  qmdEnv(ws.index, { QMD_EMBED_MODEL: tinyModelPath(), QMD_EMBED_THREADS: '1', ...extra });

beforeAll(async () => {
  for (const args of [['collection', 'add', ws.notesDir, '--name', 'notes'], ['embed']]) {
    const run = await runQmd(args, env());
    expect(run.code, run.stderr).toBe(0);
  }
});
afterAll(() => ws.cleanup());

// `qmd query --json` is qmd 2.x's array of results; `--explain` puts how the query ran on each.
const files = (stdout: string): string[] => (JSON.parse(stdout) as Array<{ file: string }>).map((r) => r.file);
const explained = (stdout: string) => {
  const results = JSON.parse(stdout) as Array<{
    explain: Record<string, unknown> & { searches: Array<{ type: string }> };
  }>;
  expect(results.length, stdout).toBeGreaterThan(0);
  return results[0]?.explain as Record<string, unknown> & { searches: Array<{ type: string }> };
};

describe('the GPU choice on a machine without a GPU', () => {
  it('auto (the default) falls back to the CPU with its one line, and answers as the CPU does', async () => {
    const auto = await runQmd(['query', 'bread knife', '--json', '--explain'], env());
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stderr.split('\n').filter((l) => l === NO_GPU_LINE)).toHaveLength(1);
    const off = await runQmd(['--gpu', 'off', 'query', 'bread knife', '--json', '--explain'], env({ QMD_GPU: 'auto' }));
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toContain('GPU');
    expect(JSON.parse(auto.stdout)).toEqual(JSON.parse(off.stdout));
    expect(explained(auto.stdout).mode).toBe('hybrid');
  });

  it('a named backend that does not load: one warning naming it and how to turn it off, then the CPU', async () => {
    const run = await runQmd(['query', 'bread knife', '--json', '--explain'], env({ QMD_GPU: 'vulkan' }));
    expect(run.code, run.stderr).toBe(0);
    const warnings = run.stderr.split('\n').filter((l) => l.startsWith('QMD Warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^QMD Warning: GPU backend did not load \(vulkan: .+\): llama\.cpp runs on the CPU\./);
    expect(warnings[0]).toContain('--gpu off (or QMD_GPU=off)');
    expect(explained(run.stdout).mode).toBe('hybrid');
  });

  it('a choice that is none of them: one line and exit 1 (variable) or 2 (flag)', async () => {
    const variable = await runQmd(['query', 'bread'], env({ QMD_GPU: 'rocm' }));
    expect(variable.code).toBe(1);
    expect(variable.stderr.trim()).toBe('qmd: QMD_GPU must be one of auto, off, metal, cuda, vulkan, got "rocm"');
    const flag = await runQmd(['--gpu', 'rocm', 'query', 'bread'], env());
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("option '--gpu <backend>' argument 'rocm' is invalid");
  });

  it('nothing that ships hard-codes the CPU', () => {
    const shipped = readdirSync(DIST, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(mjs|cjs|js)$/.test(f));
    expect(shipped.length).toBeGreaterThan(2);
    const offending = shipped.filter((f) => /gpu:\s*false/.test(readFileSync(join(DIST, f), 'utf8')));
    expect(offending).toEqual([]);
  });
});

describe('qmd status and the status tool', () => {
  it('qmd status loads the backend (not the models) and says where llama.cpp runs and what each model is', async () => {
    const run = await runQmd(['status'], env({ QMD_RERANK_MODEL: tinyRerankerPath() }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'llama.cpp: the CPU: no GPU found (no Metal, CUDA or Vulkan driver detected) (--gpu auto), 1 thread',
    );
    expect(run.stdout).toContain(`  embed: ${tinyModelPath()} (not loaded)`);
    expect(run.stdout).toContain(`  rerank: ${tinyRerankerPath()} (not loaded)`);
    expect(run.stdout).toContain('  expand: off');
    const json = JSON.parse((await runQmd(['status', '--json'], env({ QMD_GPU: 'off' }))).stdout);
    expect(json.models).toMatchObject({
      requested: 'off',
      threads: 1,
      backend: { requested: 'off', gpu: 'cpu', devices: [] },
      configured: { embed: tinyModelPath(), rerank: null, expand: null },
    });
  });

  it('the status tool: nothing loaded before a query; after one, the backend and each model’s layers', async () => {
    const session = await sdkSession(env({ QMD_RERANK_MODEL: tinyRerankerPath() }));
    try {
      const before = await session.client.callTool({ name: 'status', arguments: {} });
      expect(before.structuredContent).toMatchObject({
        llm: {
          requested: 'auto',
          backend: null,
          devices: [],
          threads: 1,
          models: [
            { role: 'embed', model: tinyModelPath(), loaded: false },
            { role: 'rerank', model: tinyRerankerPath(), loaded: false },
            { role: 'expand', model: null, loaded: false },
          ],
        },
      });
      expect(textOf(before)).toContain('llama.cpp: not loaded yet');
      await session.client.callTool({ name: 'query', arguments: { query: 'bread knife' } });
      const after = await session.client.callTool({ name: 'status', arguments: {} });
      expect(after.structuredContent).toMatchObject({
        llm: {
          backend: 'cpu',
          fallback: 'no GPU found (no Metal, CUDA or Vulkan driver detected)',
          models: [
            { role: 'embed', loaded: true, gpuLayers: 0, layers: 3 },
            { role: 'rerank', loaded: true, gpuLayers: 0, layers: 3 },
            { role: 'expand', model: null, loaded: false },
          ],
        },
      });
      expect(textOf(after)).toContain(`  rerank: ${tinyRerankerPath()} (loaded, 0 of 3 layers on the GPU)`);
      await session.client.close();
      expect(await session.exit()).toEqual({ code: 0, signal: null });
    } finally {
      session.kill();
    }
  });
});

/** A loopback port nothing listens on: connecting is refused at once, with or without network. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the peer’s default models, not downloaded', () => {
  it('a query says how to get each, without a warning, and answers with BM25 and vectors', async () => {
    const defaults = env();
    delete defaults.QMD_RERANK_MODEL;
    delete defaults.QMD_EXPAND_MODEL;
    const run = await runQmd(['query', 'bread', '--json', '--explain'], defaults);
    expect(run.code, run.stderr).toBe(0);
    const result = explained(run.stdout);
    expect(result).toMatchObject({
      mode: 'hybrid',
      reranked: false,
      expansionNote:
        'not expanded: the query expansion model hf:tobil/qmd-query-expansion-1.7B-gguf/' +
        'qmd-query-expansion-1.7B-q4_k_m.gguf is not downloaded (qmd pull fetches it)',
      rerankNote:
        'not reranked: the reranking model hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf ' +
        'is not downloaded (qmd pull fetches it)',
    });
    expect(run.stderr).not.toContain('QMD Warning');
  });

  it('qmd pull: local files are checked, an unreachable host is one line each and exit 1', async () => {
    const local = await runQmd(['pull'], env({ QMD_RERANK_MODEL: tinyRerankerPath(), QMD_EXPAND_MODEL: 'off' }));
    expect(local.code, local.stderr).toBe(0);
    const checked = (file: string) => `- ${file} -> ${file} (${formatBytes(statSync(file).size)}, cached/checked)`;
    expect(local.stdout.trim().split('\n')).toEqual([
      'Pulling models',
      checked(tinyModelPath()),
      checked(tinyRerankerPath()),
      '- expand: off',
    ]);
    const offline = env({ HF_ENDPOINT: `http://127.0.0.1:${await closedPort()}/` });
    delete offline.QMD_RERANK_MODEL;
    const run = await runQmd(['pull'], offline);
    expect(run.code).toBe(1);
    expect(run.stdout.trim().split('\n')).toEqual(['Pulling models', checked(tinyModelPath()), '- expand: off']);
    expect(run.stderr).toMatch(
      /^qmd: cannot download the reranking model hf:ggml-org\/Qwen3-Reranker-0\.6B-Q8_0-GGUF\/.+ is unreachable/m,
    );
  });
});

describe('the three tiny models over MCP', () => {
  it('a plain query is expanded and reranked; rerank: false is the fusion’s order', async () => {
    const session = await sdkSession(
      env({ QMD_RERANK_MODEL: keywordRerankerPath('sourdough'), QMD_EXPAND_MODEL: tinyGeneratorPath() }),
    );
    try {
      const call = (args: Record<string, unknown>) => session.client.callTool({ name: 'query', arguments: args });
      const reranked = (await call({ query: 'bread' })).structuredContent as {
        reranked: boolean;
        searches: Array<{ type: string; expanded?: boolean }>;
        expansionNote?: string;
        results: Array<{ file: string }>;
      };
      expect(reranked.reranked).toBe(true);
      expect(reranked.searches.slice(0, 2).map((s) => s.type)).toEqual(['lex', 'vec']);
      // Random weights rarely write a line sharing a word with the query; either way it is said.
      if (!reranked.searches.some((s) => s.expanded)) expect(reranked.expansionNote).toMatch(/kept none/);
      const fused = (await call({ searches: [{ type: 'lex', query: 'bread' }], rerank: false })).structuredContent as {
        reranked: boolean;
        results: Array<{ file: string }>;
      };
      expect(fused.reranked).toBe(false);
      expect(fused.results.map((r) => r.file)).toEqual([
        'notes/a.md',
        'notes/b.md',
        'notes/c.md',
        'notes/d.md',
        'notes/e.md',
        'notes/f.md',
      ]);
      const lexReranked = (await call({ searches: [{ type: 'lex', query: 'bread' }] })).structuredContent as {
        results: Array<{ file: string }>;
      };
      expect(lexReranked.results.map((r) => r.file)).toEqual([
        'notes/a.md',
        'notes/b.md',
        'notes/f.md',
        'notes/c.md',
        'notes/d.md',
        'notes/e.md',
      ]);
      await session.client.close();
      expect(await session.exit()).toEqual({ code: 0, signal: null });
      expect(session.stderr()).toContain('reranking model loaded:');
      expect(session.stderr()).toContain('query expansion model loaded:');
    } finally {
      session.kill();
    }
  });

  it('qmd query --no-rerank and --no-expand on the command line', async () => {
    const models = { QMD_RERANK_MODEL: keywordRerankerPath('sourdough'), QMD_EXPAND_MODEL: tinyGeneratorPath() };
    const plain = await runQmd(['query', 'bread', '--no-rerank', '--no-expand', '--json', '--explain'], env(models));
    expect(plain.code, plain.stderr).toBe(0);
    const result = explained(plain.stdout);
    expect(result).toMatchObject({ mode: 'hybrid', reranked: false });
    expect(result.rerankNote).toBeUndefined();
    expect(result.searches.map((s: { type: string }) => s.type)).toEqual(['lex', 'vec']);
    expect(plain.stderr).not.toContain('query expansion model loaded');
    expect(plain.stderr).not.toContain('reranking model loaded');
    const reranked = await runQmd(['query', 'bread', '--no-expand', '--json', '--explain'], env(models));
    expect(explained(reranked.stdout).reranked).toBe(true);
    expect(files(reranked.stdout)).not.toEqual(files(plain.stdout));
  });
});
