/**
 * Progress when stderr is not a terminal (issue 31: 5,272 chunks took 8.8 minutes with no
 * line at all): plain lines at least every interval while the work goes on, nothing on stdout
 * but the result, never an escape sequence; `qmd mcp` prints none. The interval is
 * QMD_PROGRESS_INTERVAL_MS (10 s by default, test/cli/terminal/progress.test.ts checks that
 * on a fake clock); each embedding is held by a failpoint until the test has seen a line, so
 * no run depends on how fast the machine is.
 */

import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const NOTES: Record<string, string> = {
  'a.md': '# Alpha\n\nThe first note, about sourdough.\n',
  'b.md': '# Bravo\n\nThe second note, about rye.\n',
  'c.md': '# Charlie\n\nThe third note, about spelt.\n',
};
const ws = tempWorkspace(NOTES);
let model: string;
const env = (extra: Record<string, string> = {}) =>
  qmdEnv(ws.index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1', ...extra });

beforeAll(async () => {
  model = tinyModelPath();
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env());
  expect(added.code, added.stderr).toBe(0);
});
afterAll(() => ws.cleanup());

// biome-ignore lint/suspicious/noControlCharactersInRegex: escapes are what must not be there.
const ESCAPE = /\x1b/;
const HIT = 'QMD Debug: failpoint llm.embed hit (hang)';

describe('qmd embed, piped', () => {
  it('while a chunk hangs: a plain line on stderr every interval, nothing on stdout; two Ctrl-C exit 130', async () => {
    // `hang` holds the first embedding for good (a stuck native call) and the process with it:
    // the lines must come anyway, and only a second SIGINT can end it.
    const child = spawnProcess(process.execPath, [QMD_BIN, 'embed'], {
      env: env({ QMD_PROGRESS_INTERVAL_MS: '50', QMD_FAILPOINTS: 'llm.embed=hang' }),
    });
    try {
      await child.waitForStderr(HIT, 60_000);
      const seen = child.stderr().length;
      const lines = () =>
        child
          .stderr()
          .slice(seen)
          .split('\n')
          .filter((l) => l === 'Embedding: 0/3 chunks (0%)');
      await child.waitFor(() => (lines().length >= 3 ? true : undefined), 'three progress lines while the chunk hangs');
      expect(child.stdout()).toBe('');
      child.child.kill('SIGINT');
      await child.waitForStderr('Stopping after the current chunk (Ctrl-C again to quit at once)...');
      child.child.kill('SIGINT');
      expect(await waitForExit(child)).toEqual({ code: 130, signal: null });
    } finally {
      child.kill();
    }
    expect(child.stderr()).toContain('Quitting at once; the index keeps everything committed before now.');
    expect(child.stderr()).not.toMatch(ESCAPE);
    expect(child.stdout()).toBe('');
  });

  it('work shorter than the interval: no progress line at all, just the result on stdout', async () => {
    // An interval no run here reaches (the default 10 s could be, on a loaded machine).
    const run = await runQmd(['embed'], env({ QMD_PROGRESS_INTERVAL_MS: '3600000' }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Embedded 3 chunks, skipped 0 unchanged, removed 0 .*\]\n$/);
    expect(run.stderr).not.toMatch(/^(Preparing|Chunking|Embedding)/m);
  });
});

describe('qmd mcp', () => {
  it('prints no progress, even with the shortest interval', async () => {
    const server = spawnMcp(env({ QMD_PROGRESS_INTERVAL_MS: '1' }));
    try {
      const client = new Client({ name: 'e2e-progress', version: '1.0.0' });
      await client.connect(new ChildTransport(server.child));
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(found.isError).toBeFalsy();
      await client.close();
      expect((await waitForExit(server)).code).toBe(0);
    } finally {
      server.kill();
    }
    expect(server.stderr()).not.toMatch(/^(Preparing|Listing|Reading|Writing|Chunking|Embedding)\b/m);
  });
});
