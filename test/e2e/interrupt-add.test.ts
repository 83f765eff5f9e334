/**
 * Ctrl-C in `qmd collection add` of thousands of files, in a real terminal, wherever it lands:
 * the first ends the command within one unit of work (a batch of files read, written and
 * committed), with exit 130, the index whole (`integrity_check`, one FTS row per document) and
 * holding exactly what the line says was kept; a second leaves nothing drawn after its line.
 *
 * The points are drawn from a seeded generator (`QMD_TEST_SEED` replays one): the first thing
 * drawn, or the bar past k of n files. The bound on keypress → exit is generous (5 s, against
 * about 0.2 s measured: bench/results-interrupt.md), so it fails on a command that writes
 * everything read before it stops (1.0-6.8 s before units), not on a busy machine.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Sqlite } from '../../src/store/sqlite.js';
import { CTRL_C, frames, ptyExit, runInPty, screenLines } from '../support/pty.js';
import { QMD_BIN, qmdEnv, tempWorkspace } from '../support/qmd.js';
import { seededRandom, testSeed } from '../support/seeded.js';

const SEED = testSeed();
const random = seededRandom(SEED);
const FILES = 3_200;
const BOUND_MS = 5_000;

const notes: Record<string, string> = {};
for (let i = 0; i < FILES; i++) {
  notes[`d${i % 8}/n${String(i).padStart(4, '0')}.md`] = `# Note ${i}\n\n${'words of a note '.repeat(40)}w${i}\n`;
}
const ws = tempWorkspace(notes);
afterAll(() => ws.cleanup());

function facts(index: string) {
  const db = new Sqlite(index, { readOnly: true });
  try {
    return {
      integrity: db.value<string>('PRAGMA integrity_check'),
      collections: db.value<number>('SELECT count(*) FROM collections') ?? -1,
      documents: db.value<number>('SELECT count(*) FROM documents') ?? -1,
      fts: db.value<number>('SELECT count(*) FROM documents_fts') ?? -1,
      texts: db.value<number>('SELECT count(*) FROM documents d JOIN content c ON c.hash = d.hash') ?? -1,
    };
  } finally {
    db.close();
  }
}

type Point = { kind: 'first' } | { kind: 'past'; k: number };
const RUNS: Array<{ point: Point; twice: boolean }> = [];
for (let i = 0; i < 6; i++) {
  const point: Point = random() < 0.15 ? { kind: 'first' } : { kind: 'past', k: Math.floor(random() * FILES * 0.9) };
  RUNS.push({ point, twice: i % 2 === 1 });
}
const describeRun = (r: (typeof RUNS)[number]) =>
  `Ctrl-C ${r.twice ? 'twice' : 'once'} at ${r.point.kind === 'first' ? 'the first thing drawn' : `Indexing past ${r.point.k}`}`;

const DONE = /^Added collection/;
/**
 * Files a command may still write after the key, past what its bar showed: the unit in hand,
 * and the bar's lag (one redraw per 100 ms at most), a unit each (256 files).
 */
const SLACK = 3 * 256;
const BAR = /^Indexing notes\s+\[[█░]+\]\s+([\d,]+)\//;

describe(`collection add of ${FILES} files, Ctrl-C at seeded points (seed ${SEED}; QMD_TEST_SEED=${SEED} replays)`, () => {
  it.each(RUNS.map((r, i) => [i + 1, describeRun(r), r] as const))('run %i: %s', async (i, _, run) => {
    const index = join(ws.dir, `add-${i}.sqlite`);
    const p = runInPty(process.execPath, [QMD_BIN, 'collection', 'add', ws.notesDir, '--name', 'notes'], {
      env: qmdEnv(index),
    });
    try {
      await p.waitFor(
        (out) => {
          const drawn = frames(out);
          if (drawn.some((f) => DONE.test(f))) return true;
          if (run.point.kind === 'first') return drawn.length > 0 ? true : undefined;
          const k = run.point.k;
          return drawn.some((f) => Number(BAR.exec(f)?.[1]?.replace(/,/g, '') ?? -1) >= k) ? true : undefined;
        },
        'the point',
        120_000,
      );
      const late = frames(p.output()).some((f) => DONE.test(f));
      // How far the bar was when the key was typed: the files committed by then, or fewer (it is
      // drawn 10 times a second at most).
      const shown = frames(p.output())
        .map((f) => Number(BAR.exec(f)?.[1]?.replace(/,/g, '') ?? 0))
        .reduce((a, b) => Math.max(a, b), 0);
      const pressed = performance.now();
      p.write(CTRL_C);
      if (run.twice && !late) {
        await p.waitFor((out) => (/Stopping after the current/.test(out) ? true : undefined), 'the first answered');
        p.write(CTRL_C);
      }
      const exit = await ptyExit(p, 60_000);
      const ms = performance.now() - pressed;
      const output = p.output();
      // Without the terminal's own echo of each Ctrl-C (`^C`), which can start a line.
      const lines = screenLines(output)
        .map((l) => l.replace(/^(\^C)+/, ''))
        .filter((l) => l.trim() !== '');
      if (late) return; // the work was over before the key: nothing to stop
      expect(exit, output).toEqual({ code: 130, signal: null });
      // Within one unit of the keypress (measured ~0.2 s), a generous bound.
      expect(ms, output).toBeLessThan(BOUND_MS);
      // Nothing of a bar is left on the screen, and none was drawn after the last line.
      expect(
        lines.filter((l) => l.includes('█') || l.includes('░')),
        JSON.stringify(output),
      ).toEqual([]);
      const last = lines.at(-1) ?? '';
      expect(output.lastIndexOf(last), output).toBeGreaterThan(0);
      expect(output.slice(output.lastIndexOf(last))).not.toMatch(/[█░]/);
      // The second key quits, unless the first had already ended the command (it may, in a
      // fraction of a second): then the first's line is the last.
      // And a first key heard as the last unit committed says the work was done; the result
      // (stdout) follows it.
      const saidDone = lines.includes('Interrupted after the work was done: collection notes is indexed in full.');
      if (run.twice && !(saidDone && DONE.test(last)))
        expect(last, output).toMatch(
          /^(Quitting at once; the index keeps everything committed before now\.$|Interrupted)/,
        );

      if (!existsSync(index)) {
        // Stopped before a file was written: it made the index and leaves none.
        expect(
          lines.some((l) => /^(Interrupted before any file was read|Quitting at once)/.test(l)),
          output,
        ).toBe(true);
        return;
      }
      const after = facts(index);
      expect(after.integrity).toBe('ok');
      expect(after.fts).toBe(after.documents);
      expect(after.texts).toBe(after.documents);
      const kept = lines
        .map((l) => /^Interrupted: collection notes was added with ([\d,]+) of ([\d,]+) files/.exec(l))
        .find(Boolean);
      // It stops within a unit or two of the key, never by writing all that was read.
      expect(after.documents, output).toBeLessThanOrEqual(shown + SLACK);
      if (kept) {
        expect(after.documents).toBe(Number(kept[1]?.replace(/,/g, '')));
        expect(Number(kept[2]?.replace(/,/g, ''))).toBe(FILES);
      } else if (run.twice) {
        // Whole units only: batches of 256 files, or all of them.
        expect(after.documents % 256 === 0 || after.documents === FILES, `${after.documents}`).toBe(true);
        expect(after.collections).toBe(after.documents > 0 ? 1 : 0);
      } else {
        expect(lines).toContain('Interrupted after the work was done: collection notes is indexed in full.');
        expect(after.documents).toBe(FILES);
      }
    } finally {
      p.kill();
    }
  });
});
