/**
 * A query worker that cannot hurt (docs/design.md §8.4): it never inherits the flags of a
 * wrapper that started the process (`workerExecArgv`), and one that cannot start, or dies,
 * leaves every call answered on the main thread, with one line, until it is tried again after
 * a backoff (a fake clock here). Real worker threads on a real index.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import type { Store } from '../../src/core/types.js';
import { noFailpoints } from '../../src/failpoints.js';
import { InlineReads } from '../../src/search/query-reads.js';
import { QueryWorker, WORKER_RETRY_MS, type WorkerScript } from '../../src/search/query-worker-client.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

const REAL = new URL('../../src/search/query-worker.ts', import.meta.url);
const DYING: WorkerScript = {
  file: new URL('./fixtures/dying-worker.ts', import.meta.url),
  execArgv: ['--import', 'tsx'],
};

let box: Sandbox;
const open: Store[] = [];
beforeEach(async () => {
  box = sandbox();
  const root = box.notes('notes', {
    'bread.md': '# Bread\n\nsourdough starter and a hot oven\n',
    'garden.md': '# Garden\n\npruning roses in spring\n',
  });
  const writer = openStore(box.index);
  await writer.addCollection(root, { name: 'notes' });
  await writer.close();
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  box.cleanup();
});

function recordingLog() {
  const lines: string[] = [];
  return { lines, log: { line: (t: string) => lines.push(t), warn: (t: string) => lines.push(`QMD Warning: ${t}`) } };
}

describe('a worker that cannot start', () => {
  for (const [what, execArgv] of [
    [
      'fails at start (--input-type, as under the SDK’s `node --input-type=module -e` wrapper)',
      ['--import', 'tsx', '--input-type=module'],
    ],
    ['is refused by Node at once (a V8 flag given to a worker)', ['--import', 'tsx', '--max-old-space-size=512']],
  ] as const) {
    it(`${what}: every call is answered on the main thread, with one line`, async () => {
      const { lines, log } = recordingLog();
      const inline = openStore(box.index, { readonly: true });
      open.push(inline);
      const store = openStore(box.index, { readonly: true, log, queryWorker: { file: REAL, execArgv: [...execArgv] } });
      open.push(store);
      for (let i = 0; i < 3; i++) expect(await store.query('sourdough')).toEqual(await inline.query('sourdough'));
      expect(await store.multiGet('notes/**', { maxLines: 1 })).toEqual(
        await inline.multiGet('notes/**', { maxLines: 1 }),
      );
      expect((await store.readStatus()).collections.map((c) => c.documents)).toEqual([2]);
      const warnings = lines.filter((l) => l.startsWith('QMD Warning: the query worker'));
      expect(warnings, lines.join('\n')).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /^QMD Warning: the query worker could not start \(.+\): queries run on the main thread; it is tried again in 1 s$/,
      );
    });
  }
});

describe('a worker that dies', () => {
  it('the call it had and every call until the retry run on the main thread; then a fresh worker takes them back', async () => {
    const { lines, log } = recordingLog();
    let now = 0;
    const inline = openStore(box.index, { readonly: true });
    open.push(inline);
    const parts = (inline as unknown as { reader: { reads: InlineReads } }).reader.reads;
    expect(parts).toBeInstanceOf(InlineReads);
    const reads = new QueryWorker({
      path: box.index,
      busyTimeoutMs: 5000,
      vectorExtension: false,
      log,
      failpoints: noFailpoints,
      script: DYING,
      fallback: parts,
      now: () => now,
    });
    try {
      const expected = await parts.lexical('sourdough', { limit: 10 });
      expect(await reads.lexical('sourdough', { limit: 10 })).toEqual(expected);
      expect(lines).toContain('runs 1 lexical');
      // The worker dies running this one: it is answered all the same.
      const status = await reads.status();
      expect(status.collections.map((c) => c.documents)).toEqual([2]);
      expect(lines.filter((l) => l.startsWith('QMD Warning'))).toEqual([
        'QMD Warning: the query worker stopped (it exited (code 7)): queries run on the main thread; it is tried again in 1 s',
      ]);
      // Within the backoff: no worker is started, the main thread answers.
      now = WORKER_RETRY_MS - 1;
      const ran = lines.length;
      expect(await reads.lexical('sourdough', { limit: 10 })).toEqual(expected);
      expect(lines.slice(ran).filter((l) => l.startsWith('runs'))).toEqual([]);
      expect(reads.thread).toBeUndefined();
      // Past it: a fresh worker answers, and says it is back once.
      now = WORKER_RETRY_MS;
      expect(await reads.lexical('sourdough', { limit: 10 })).toEqual(expected);
      expect(lines.slice(ran)).toEqual([
        'runs 3 lexical',
        'the query worker runs again: queries leave the main thread',
      ]);
      // It dies again: the wait starts over at 1 s, since this worker had answered.
      await reads.status();
      now += WORKER_RETRY_MS - 1;
      expect(await reads.lexical('garden', { limit: 10 })).toEqual(await parts.lexical('garden', { limit: 10 }));
      expect(reads.thread).toBeUndefined();
    } finally {
      await reads.close();
    }
  });

  it('a worker that keeps failing is tried again after 1, 2, 4 … s, at most a minute apart; one line in all', async () => {
    const { lines, log } = recordingLog();
    let now = 0;
    const inline = openStore(box.index, { readonly: true });
    open.push(inline);
    const parts = (inline as unknown as { reader: { reads: InlineReads } }).reader.reads;
    const reads = new QueryWorker({
      path: box.index,
      busyTimeoutMs: 5000,
      vectorExtension: false,
      log,
      failpoints: noFailpoints,
      script: DYING,
      fallback: parts,
      now: () => now,
    });
    /** Whether a status call at `at` started a worker (which says `runs`, then dies on it). */
    const tried = async (at: number): Promise<boolean> => {
      now = at;
      const before = lines.filter((l) => l.startsWith('runs')).length;
      expect((await reads.status()).collections.map((c) => c.documents)).toEqual([2]);
      return lines.filter((l) => l.startsWith('runs')).length > before;
    };
    try {
      let at = 0;
      expect(await tried(at)).toBe(true);
      for (const wait of [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]) {
        expect(await tried(at + wait - 1), `${wait - 1} ms after the failure at ${at}`).toBe(false);
        expect(await tried(at + wait), `${wait} ms after the failure at ${at}`).toBe(true);
        at += wait;
      }
      expect(lines.filter((l) => l.startsWith('QMD Warning'))).toHaveLength(1);
    } finally {
      await reads.close();
    }
  });
});
