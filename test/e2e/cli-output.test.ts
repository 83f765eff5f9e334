/**
 * What qmd says where it used to say a thing twice, or the wrong thing: a collection's mask
 * changed by a command that `update`'s hint names; `qmd pull` offline saying what each model's
 * absence really costs (vectors still work without the reranker and the expander); "no GPU
 * found" once in `status`; a mismatched `--embed-model` said once by `query`; a `multi-get`
 * list that names nothing at all is exit 1.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../support/gguf.js';
import { qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';

const ws = tempWorkspace({
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  '.obsidian/workspace.md': '# Workspace\n\nSourdough layout of the vault.\n',
});
afterAll(() => ws.cleanup());
const env = (extra: Record<string, string> = {}) => qmdEnv(ws.index, { QMD_GPU: 'auto', ...extra });
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('a collection’s mask', () => {
  it('update names the command that changes it; set-mask changes it; the next update indexes by it', async () => {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env());
    expect(added.code, added.stderr).toBe(0);
    const update = await runQmd(['update'], env());
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toContain(
      "  not indexed: 1 hidden file (notes/.obsidian/); to index them, change its mask: qmd collection set-mask notes '{*.md,**/*.md,.obsidian/**/*.md}', then qmd update",
    );
    // The command as the hint prints it.
    const set = await runQmd(['collection', 'set-mask', 'notes', '{*.md,**/*.md,.obsidian/**/*.md}'], env());
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(
      "✓ Set mask for 'notes': {*.md,**/*.md,.obsidian/**/*.md} (was **/*.md)\n  qmd update indexes the collection by it\n",
    );
    const again = await runQmd(['update'], env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('not indexed');
    const found = await runQmd(['search', 'layout', '--files'], env());
    expect(found.stdout).toContain('qmd://notes/.obsidian/workspace.md');
    // Back to the plain mask: the next update removes what it no longer takes.
    expect((await runQmd(['collection', 'set-mask', 'notes', '**/*.md'], env())).code).toBe(0);
    expect((await runQmd(['update'], env())).stdout).toMatch(/ 1 removed/);
  });

  it('a mask that leaves the folder, or an unknown collection: one line, exit 1, nothing changed', async () => {
    const outside = await runQmd(['collection', 'set-mask', 'notes', '../**/*.md'], env());
    expect(outside.code).toBe(1);
    expect(outside.stderr).toBe('qmd: Invalid mask "../**/*.md": use a glob relative to the directory, like **/*.md\n');
    const unknown = await runQmd(['collection', 'set-mask', 'nope', '*.md'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('qmd: No collection named "nope"; known: notes\n');
    expect((await runQmd(['collection', 'show', 'notes'], env())).stdout).toContain('Pattern:  **/*.md');
  });
});

describe('qmd pull offline', () => {
  it('one line per model, each saying what searches do without it: BM25 only without the embedding model alone', async () => {
    const offline = await runQmd(['pull'], {
      ...qmdEnv(ws.index, { XDG_CACHE_HOME: join(ws.dir, 'empty-cache'), HF_ENDPOINT: 'http://127.0.0.1:9/' }),
      QMD_RERANK_MODEL: '',
      QMD_EXPAND_MODEL: '',
    });
    expect(offline.code).toBe(1);
    const said = lines(offline.stderr);
    expect(said).toHaveLength(3);
    expect(said[0]).toMatch(/^qmd: cannot download the embedding model .*\. Search works meanwhile, with BM25 only$/);
    expect(said[1]).toMatch(
      /^qmd: cannot download the reranking model .*\. Search works meanwhile, without reranking \(BM25 and vectors, fused\)$/,
    );
    expect(said[2]).toMatch(
      /^qmd: cannot download the query expansion model .*\. Search works meanwhile, without query expansion \(the query as typed, BM25 and vectors\)$/,
    );
    expect(offline.stderr).not.toMatch(/(reranking|expansion) model[^\n]*BM25 only/);
  });
});

describe('said once', () => {
  it('qmd status: "no GPU found" once, in its llama.cpp line', async () => {
    const status = await runQmd(['status'], env());
    expect(status.code, status.stderr).toBe(0);
    const both = `${status.stdout}\n${status.stderr}`;
    const found = both.match(/no GPU found/g) ?? [];
    // A machine with a GPU says nothing of the kind; one without says it once.
    expect(found.length).toBeLessThanOrEqual(1);
    if (found.length === 1) expect(status.stdout).toMatch(/^llama\.cpp: the CPU: no GPU found/m);
  });

  it('a mismatched --embed-model: the warning once, the terminal note without its words again', async () => {
    const models = join(ws.dir, 'models');
    mkdirSync(models, { recursive: true });
    const embedded = join(models, 'a.gguf');
    const other = join(models, 'b.gguf');
    copyFileSync(tinyModelPath(), embedded);
    // The same model with one weight changed: loadable, another fingerprint.
    const bytes = readFileSync(tinyModelPath());
    bytes[bytes.length - 8] = (bytes[bytes.length - 8] ?? 0) ^ 0x01;
    writeFileSync(other, bytes);
    const embed = await runQmd(['embed', '--embed-model', embedded], env({ QMD_GPU: 'off', QMD_EMBED_THREADS: '1' }));
    expect(embed.code, embed.stderr).toBe(0);
    const query = await runQmd(['query', 'sourdough', '--embed-model', other], env({ QMD_GPU: 'off' }));
    expect(query.code, query.stderr).toBe(0);
    const said = lines(query.stderr).filter((l) => !l.startsWith('embedding model loaded'));
    const mismatch = `the index is embedded with ${embedded}, and --embed-model names another model (${other})`;
    expect(said.filter((l) => l.includes(mismatch))).toHaveLength(1);
    expect(said).toContain('(bm25: the index is embedded with another model: BM25 only)');
  });
});

describe('multi-get', () => {
  it('a list whose every item names nothing: a line each, exit 1, stdout empty', async () => {
    const run = await runQmd(['multi-get', 'notes/x.md,notes/y.md'], env());
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual(['File not found: notes/x.md', 'File not found: notes/y.md']);
    expect(run.stdout).toBe('');
  });
});
