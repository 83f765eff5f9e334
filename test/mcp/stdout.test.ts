import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

/**
 * In `qmd mcp` stdout is the JSON-RPC stream: one stray byte corrupts it. This drives every
 * tool, the resource template and every error path, and records any write to this process's
 * stdout meanwhile (the transport here is in memory, so there should be none at all).
 */
it('writes nothing to stdout, on success or failure', async () => {
  const writes: string[] = [];
  const original = process.stdout.write;
  process.stdout.write = ((chunk: unknown) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  let h: Harness | undefined;
  try {
    h = await startHarness({ failpoints: 'tool.status=throw' });
    await h.call('query', { query: 'wal' });
    await h.call('query', { query: 'wal', collections: ['nope'] });
    await h.call('query', { query: 42 });
    await h.call('get', { file: 'notes/pools.md' });
    await h.call('get', { file: '../secret.md' });
    await h.call('multi_get', { pattern: 'notes/*.md' });
    await h.call('status');
    await h.call('nope').catch(() => {});
    await h.client.readResource({ uri: 'qmd://notes/pools.md' });
    await h.client.readResource({ uri: 'qmd://notes/missing.md' }).catch(() => {});
    await h.client.listResources();
  } finally {
    process.stdout.write = original;
    await h?.close();
  }
  expect(writes).toEqual([]);
  // The failpoint's throw is the one unexpected error: it went to the log (stderr), not stdout.
  expect(h.log.warnings).toEqual(['tool status failed: failpoint tool.status: throw']);
});

/** Vitest routes `console` through its own worker RPC, so the run above cannot see it: read. */
it('has no console or process.stdout call in src/mcp', async () => {
  const root = join(import.meta.dirname, '../../src/mcp');
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
  expect(files.length).toBeGreaterThanOrEqual(10);
  for (const file of files) {
    // The one module whose job is to take fd 1 for the protocol and divert everyone else.
    if (file === join('stdio', 'stdout-guard.ts')) continue;
    const text = await readFile(join(root, file), 'utf8');
    expect(text, file).not.toMatch(/\bconsole\.|process\.stdout/);
  }
});
