/**
 * `qmd update --watch`, spawned as a person or a login service runs it (docs/design.md §9.6):
 * the update's lines, then a line per committed batch; one writer per index (a second waits and
 * takes over when the first is killed); two writers (a watcher and `qmd update`) racing leave a
 * sound index; a SIGKILL inside the watcher's write loses nothing committed; the real inotify
 * limit, lowered in a user namespace, makes it poll and say so; Ctrl-C in a terminal exits 130.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Sqlite } from '../../src/store/sqlite.js';
import { CTRL_C, runInPty } from '../support/pty.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { type Spawned, spawnProcess, waitForExit } from '../support/spawn.js';

const NOTES = { 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' };
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

async function workspace(notes: Record<string, string> = NOTES) {
  const ws = tempWorkspace(notes);
  cleanups.push(ws.cleanup);
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], qmdEnv(ws.index));
  expect(added.code, added.stderr).toBe(0);
  return ws;
}

function watch(index: string, extra: Record<string, string> = {}, prefix: string[] = []): Spawned {
  const command = prefix.length > 0 ? (prefix[0] as string) : process.execPath;
  const args = prefix.length > 0 ? [...prefix.slice(1), process.execPath] : [];
  const p = spawnProcess(command, [...args, QMD_BIN, 'update', '--watch'], {
    env: qmdEnv(index, { QMD_WATCH_INTERVAL: '300ms', ...extra }),
  });
  cleanups.push(() => p.kill());
  return p;
}

function facts(index: string) {
  const db = new Sqlite(index, { readOnly: true });
  try {
    return {
      integrity: db.pragmaValue<string>('integrity_check'),
      paths: db.column<[], string>('SELECT path FROM documents ORDER BY path').all(),
      docids: db.column<[], number>('SELECT count(DISTINCT docid) FROM documents').get(),
      orphans: db
        .column<[], number>(
          'SELECT count(*) FROM content WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = content.hash)',
        )
        .get(),
    };
  } finally {
    db.close();
  }
}

const untilOut = (p: Spawned, text: string, ms = 20_000) =>
  p.waitFor(() => (p.stdout().includes(text) ? true : undefined), `"${text}" on stdout`, ms);

describe('qmd update --watch', () => {
  it('updates, then prints a line per change written, and stops on SIGINT with 130', async () => {
    const ws = await workspace();
    fs.writeFileSync(join(ws.notesDir, 'offline.md'), '# Offline\n\nwritten before\n');
    const p = watch(ws.index);
    await p.waitForStderr('Watching 1 collection(s)');
    expect(p.stdout()).toContain('Updated 1 collection(s)');
    fs.writeFileSync(join(ws.notesDir, 'new.md'), '# New\n\nkakapo\n');
    await untilOut(p, 'notes: +1 ~0 -0 (new.md)');
    fs.rmSync(join(ws.notesDir, 'sub'), { recursive: true });
    await untilOut(p, 'notes: +0 ~0 -1 (sub/b.md)');
    p.child.kill('SIGINT');
    const exit = await waitForExit(p);
    expect(exit.code).toBe(130);
    expect(p.stderr()).toContain('Stopped watching; the index keeps every change written.');
    expect(facts(ws.index)).toMatchObject({ integrity: 'ok', paths: ['a.md', 'new.md', 'offline.md'] });
  });

  it('leaves the writer place to the first; the second takes over when the first is killed', async () => {
    const ws = await workspace();
    const first = watch(ws.index);
    await first.waitForStderr('Watching 1 collection(s)');
    const second = watch(ws.index);
    await second.waitForStderr(`Another qmd (pid ${first.child.pid}) keeps this index fresh; waiting to take over`);
    first.child.kill('SIGKILL');
    await second.waitForStderr('Taking over: watching the collections now');
    fs.writeFileSync(join(ws.notesDir, 'after.md'), '# After\n\ntakahe\n');
    await untilOut(second, 'notes: +1 ~0 -0 (after.md)');
  });

  it('races qmd update typed in a terminal without corrupting or duplicating anything', async () => {
    const ws = await workspace();
    const p = watch(ws.index);
    await p.waitForStderr('Watching 1 collection(s)');
    const updates: Array<Promise<{ code: number | null }>> = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 100; i++) {
        fs.mkdirSync(join(ws.notesDir, `r${round}`), { recursive: true });
        fs.writeFileSync(join(ws.notesDir, `r${round}/n${i}.md`), `# R${round} ${i}\n\nround ${round} note ${i}\n`);
      }
      if (round > 0) fs.rmSync(join(ws.notesDir, `r${round - 1}/n0.md`));
      updates.push(runQmd(['update'], qmdEnv(ws.index)));
    }
    for (const u of updates) expect((await u).code).toBe(0);
    // Heard after every write above: once its line is out, the watcher has written them too.
    fs.writeFileSync(join(ws.notesDir, 'marker.md'), '# Marker\n\nlast\n');
    await untilOut(p, '(marker.md)', 40_000);
    const expected = 2 + 400 - 3 + 1;
    p.child.kill('SIGINT');
    await waitForExit(p);
    const after = facts(ws.index);
    expect(after.integrity).toBe('ok');
    expect(after.docids).toBe(expected);
    expect(new Set(after.paths).size).toBe(expected);
    expect(after.orphans).toBe(0);
    expect(after.paths.length).toBe(expected);
  }, 90_000);

  it('loses nothing committed when SIGKILLed inside its write, and catches up on restart', async () => {
    const ws = await workspace();
    const p = watch(ws.index, { QMD_FAILPOINTS: 'watch.write=hang' });
    await p.waitForStderr('Watching 1 collection(s)');
    fs.writeFileSync(join(ws.notesDir, 'inflight.md'), '# Inflight\n\nkiwi\n');
    await p.waitForStderr('failpoint watch.write: inside the write transaction, before COMMIT');
    p.child.kill('SIGKILL');
    await p.exited;
    expect(facts(ws.index)).toMatchObject({ integrity: 'ok', paths: ['a.md', 'sub/b.md'] });
    const again = watch(ws.index);
    await again.waitForStderr('Watching 1 collection(s)');
    expect(again.stdout()).toContain('1 added');
    expect(facts(ws.index).paths).toEqual(['a.md', 'inflight.md', 'sub/b.md']);
  });

  it('polls, saying so, when the real inotify limit is reached', async (context) => {
    const probe = spawnSync('unshare', [
      '--user',
      '--map-root-user',
      'sh',
      '-c',
      'echo 2 > /proc/sys/user/max_inotify_watches',
    ]);
    if (probe.status !== 0) context.skip();
    const ws = await workspace({ ...NOTES, 'c/c.md': '# C\n\ncharlie\n', 'd/d.md': '# D\n\ndelta\n' });
    const p = watch(ws.index, {}, [
      'unshare',
      '--user',
      '--map-root-user',
      'sh',
      '-c',
      'echo 2 > /proc/sys/user/max_inotify_watches && exec "$@"',
      'sh',
    ]);
    await p.waitForStderr(
      /Watching: polling .* every 0\.3 s \(longer if a pass takes over 1\/20 of that\): the OS limit on watches was reached \(inotify/,
    );
    await p.waitForStderr('Watching 1 collection(s) (1 polled)');
    fs.writeFileSync(join(ws.notesDir, 'd/polled.md'), '# Polled\n\nweka\n');
    await untilOut(p, 'notes: +1 ~0 -0 (d/polled.md)');
  });

  it('exits 130 on Ctrl-C in a terminal, with its own status', async () => {
    const ws = await workspace();
    const pty = runInPty(process.execPath, [QMD_BIN, 'update', '--watch'], { env: qmdEnv(ws.index) });
    cleanups.push(() => pty.kill());
    await pty.waitForOutput('Watching 1 collection(s)');
    pty.write(CTRL_C);
    const exit = await pty.exited;
    expect(exit).toEqual({ code: 130, signal: null });
    expect(pty.output()).toContain('Stopped watching');
  });
});
