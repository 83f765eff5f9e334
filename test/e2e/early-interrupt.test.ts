/**
 * Ctrl-C at any moment of a long command (docs/design.md §6): a SIGINT that comes while
 * `qmd update` is still loading, parsing or opening the index gets exit 130 and its line, as
 * one during the work does, never Node's default (killed by the signal, no line). The first
 * thing `qmd` runs installs its SIGINT listener (`src/sigint.ts`); `QMD_TEST_SIGINT_READY=1`
 * (tests only) says so on stderr, and from that moment each run sends one SIGINT after a delay
 * drawn from a seeded generator (0–1,100 ms: the window where 8 of 20 used to kill it). The
 * delay only chooses the moment; what is checked is the process's own exit status and its
 * stderr. Before that line nothing of qmd runs yet: Node's own start-up is Node's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_SIGINT_LINE } from '../../src/sigint.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { seededRandom } from '../support/seeded.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const SEED = Number(process.env.QMD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));

const random = seededRandom(SEED);
const DELAYS = Array.from({ length: 20 }, () => Math.floor(random() * 1100));

const FILES = 300;
const notes = (word: string) =>
  Object.fromEntries(
    Array.from({ length: FILES }, (_, i) => [`n${i}.md`, `# ${word} ${i}\n\n${word}${i} and more.\n`]),
  );
const ws = tempWorkspace(notes('old'));
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = qmdEnv(ws.index, { QMD_TEST_SIGINT_READY: '1' });
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  expect(added.code, added.stderr).toBe(0);
}, 120_000);
afterAll(() => ws.cleanup());

/** Every line a Ctrl-C may be answered with, wherever it lands (src/sigint.ts, src/cli/terminal/interrupt.ts). */
const ANSWERS = [EARLY_SIGINT_LINE, 'Stopping after the current', 'Interrupted', 'Quitting at once'];

describe(`a SIGINT in the first second of qmd update (seed ${SEED}; QMD_TEST_SEED=${SEED} replays)`, () => {
  it.each(DELAYS.map((delay, i) => [i + 1, delay]))('run %i: %i ms after qmd is listening', async (run, delay) => {
    // Something to do: half the notes changed since the index was made.
    const changed = run % 2 === 0 ? 'new' : 'newer';
    for (let i = 0; i < FILES; i += 2)
      writeFileSync(join(ws.notesDir, `n${i}.md`), `# ${changed} ${i}\n\n${changed}${i}.\n`);
    const p = spawnProcess(process.execPath, [QMD_BIN, 'update'], { env });
    try {
      p.child.stdin?.end();
      await p.waitForStderr('QMD Debug: SIGINT listener installed');
      await new Promise((resolve) => setTimeout(resolve, delay));
      const sent = p.child.exitCode === null && p.child.kill('SIGINT');
      const exit = await waitForExit(p);
      const finished = p.stdout().includes('Updated 1 collection(s)');
      if (!sent) {
        // The work was done and the process gone before the moment came: nothing to interrupt.
        expect(exit).toEqual({ code: 0, signal: null });
        return;
      }
      // Never killed by the signal; 130 with its line, or 0 if it had already finished.
      expect(exit.signal, p.stderr()).toBeNull();
      if (exit.code === 0) expect(finished, p.stderr()).toBe(true);
      else {
        expect(exit.code, p.stderr()).toBe(130);
        expect(
          ANSWERS.some((line) => p.stderr().includes(line)),
          p.stderr(),
        ).toBe(true);
      }
    } finally {
      p.kill();
    }
    // Whatever the moment, the index is whole: the next update finishes the work.
    const after = await runQmd(['update'], env);
    expect(after.code, after.stderr).toBe(0);
  });
});
