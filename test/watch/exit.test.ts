/**
 * No handle of a started watcher keeps its process alive: its folder watches, timers and the
 * writer's place are all unref'd, so a process whose other work ends exits by itself.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { sandbox } from '../store/helpers.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/started-then-done.ts', import.meta.url));

describe('a started watcher', () => {
  it('lets its process exit when the other work ends', async () => {
    const box = sandbox();
    try {
      const root = box.notes('notes', { 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
      const store = openStore(box.index);
      await store.addCollection(root, { name: 'notes' });
      await store.close();
      const p = spawnProcess(process.execPath, ['--import', 'tsx', FIXTURE, box.index]);
      try {
        await p.waitFor(() => (p.stdout().includes('started') ? true : undefined), 'the watcher started');
        expect(p.stdout()).toContain('"role":"writer"');
        expect(p.stdout()).toContain('"via":"events"');
        const exit = await waitForExit(p, 15_000);
        expect(exit).toEqual({ code: 0, signal: null });
      } finally {
        p.kill();
      }
    } finally {
      box.cleanup();
    }
  });
});
