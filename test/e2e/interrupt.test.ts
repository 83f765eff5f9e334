/**
 * Ctrl-C keeps its word (issue 31), in a real terminal: `qmd embed`, `update` and `collection
 * add` get Ctrl-C (the byte 0x03 typed into the pty, so the kernel sends SIGINT) at a random
 * point of their work. The first finishes the current unit, commits, says what was kept and
 * exits 130; a second exits 130 at once. Either way the process exits with its own status 130
 * (never killed by the signal), and the index passes `PRAGMA integrity_check` with counts that
 * agree with what was said; the next run finishes the work.
 *
 * The points are drawn from a seeded generator (`QMD_TEST_SEED` replays a failure: the seed is
 * in each test's name). A point is an observable state of the work — the first thing drawn,
 * or the bar past k of n — never a delay.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sqlite } from '../../src/store/sqlite.js';
import { tinyModelPath } from '../support/gguf.js';
import { DEFAULT_MODEL_PATH } from '../support/model-server.js';
import { CTRL_C, frames, type PtyProcess, ptyExit, runInPty, screenLines } from '../support/pty.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { seededRandom, testSeed } from '../support/seeded.js';

const SEED = testSeed();
const random = seededRandom(SEED);

const FILES = 1500;
const CHUNKS = 120;

function notes(n: number, word: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`n${String(i).padStart(4, '0')}.md`] = `# ${word} ${i}\n\n${word}${i} and more.\n`;
  return files;
}

const ws = tempWorkspace(notes(FILES, 'old'));
const small = tempWorkspace(notes(CHUNKS, 'chunk'));
let model: string;
/** Indexed with the old text, while the files now hold the new: `update` rewrites all of them. */
const updateTemplate = join(ws.dir, 'update-template.sqlite');
/** CHUNKS notes indexed, none embedded. */
const embedTemplate = join(small.dir, 'embed-template.sqlite');

const env = (index: string) => qmdEnv(index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' });

beforeAll(async () => {
  model = tinyModelPath();
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env(updateTemplate));
  expect(added.code, added.stderr).toBe(0);
  for (const [file, text] of Object.entries(notes(FILES, 'new'))) writeFileSync(join(ws.notesDir, file), text);
  const small_ = await runQmd(['collection', 'add', small.notesDir, '--name', 'notes'], env(embedTemplate));
  expect(small_.code, small_.stderr).toBe(0);
}, 120_000);
afterAll(() => {
  ws.cleanup();
  small.cleanup();
});

/** A fresh copy of a template index (closed, so one file), at a new path. */
function copyOf(template: string, name: string): string {
  const index = join(template, '..', `${name}.sqlite`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${index}${suffix}`, { force: true });
  copyFileSync(template, index);
  return index;
}

function facts(index: string) {
  const db = new Sqlite(index, { readOnly: true });
  try {
    return {
      integrity: db.value<string>('PRAGMA integrity_check'),
      documents: db.value<number>('SELECT count(*) FROM documents') ?? -1,
      fts: db.value<number>('SELECT count(*) FROM documents_fts') ?? -1,
      newText: db.value<number>("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'new'") ?? -1,
      vectors: db.value<number>('SELECT count(*) FROM embeddings') ?? -1,
    };
  } finally {
    db.close();
  }
}

/** The point: the first frame drawn, or the bar past `k` of the stage named. */
type Point = { kind: 'first' } | { kind: 'past'; stage: string; k: number };

/** The command printed its result: the work is over, and a Ctrl-C now may find it gone. */
const DONE = /^(Added collection|Updated \d|Embedded \d)/;
/** The last stage's bar full: what is left (the commit, the close) is the end of the work. */
const FULL = /^(Indexing notes|Embedding)\s+\[█+\]\s+([\d,]+)\/\2 /;

/** Whether the work was (all but) over: a Ctrl-C then may come after the process has finished. */
const over = (out: string) => frames(out).some((f) => DONE.test(f)) || FULL.test(frames(out).at(-1) ?? '');

async function reach(p: PtyProcess, point: Point): Promise<void> {
  if (point.kind === 'first') {
    await p.waitFor((out) => (frames(out).length > 0 ? true : undefined), 'the first thing drawn', 60_000);
    return;
  }
  const bar = new RegExp(`^${point.stage}\\s+\\[[█░]+\\]\\s+([\\d,]+)/`);
  await p.waitFor(
    (out) => {
      // The bar is drawn 10 times a second at most: it may never show k before the work is
      // done. Then the point is "after the work", a point all the same.
      if (over(out)) return true;
      return frames(out).some((f) => Number(bar.exec(f)?.[1]?.replace(/,/g, '') ?? -1) >= point.k) ? true : undefined;
    },
    `${point.stage} past ${point.k}`,
    60_000,
  );
}

/** Runs `args` in the pty, types Ctrl-C at `point` (twice when `twice`), and returns the exit and the screen. */
async function interrupted(args: string[], index: string, point: Point, twice: boolean) {
  const p = runInPty(process.execPath, [QMD_BIN, ...args], { env: env(index) });
  try {
    await reach(p, point);
    const late = over(p.output());
    p.write(CTRL_C);
    if (twice && !late) {
      // Gone before the key arrived (see below): there is no one left to answer it.
      const answered = await p
        .waitFor(
          (out) => (/Stopping after the current|Interrupted|Quitting/.test(out) ? true : undefined),
          'the first Ctrl-C answered',
        )
        .then(
          () => true,
          (error: unknown) => {
            if (error instanceof Error && error.message.startsWith('exited before')) return false;
            throw error;
          },
        );
      if (answered) p.write(CTRL_C);
    }
    const exit = await ptyExit(p, 60_000);
    // The key may reach a command that finished in the moment between the look and the key
    // (its result printed, exit 0, no line about a Ctrl-C): a press after the end, then too.
    // Heard at all, it says so (`Stopping…`, `Quitting…`, `Interrupted…`) or exits 130.
    const after =
      exit.code === 0 &&
      exit.signal === null &&
      screenLines(p.output()).some((l) => DONE.test(l)) &&
      !/Stopping after the current|Quitting at once|Interrupted/.test(p.output());
    // The terminal echoes each Ctrl-C as `^C` where the cursor is: at the start of a line when
    // the bar was just cleared. That echo is the terminal's, not the command's.
    const lines = screenLines(p.output()).map((line) => line.replace(/^(\^C)+/, ''));
    return { exit, late: late || after, output: p.output(), lines };
  } finally {
    p.kill();
  }
}

const count = (text: string | undefined) => Number(text?.replace(/,/g, ''));

/**
 * A single Ctrl-C that found no unit left to stop: heard before the result, it says the work
 * was done; heard while the command closed (the result printed), it quits at once.
 */
function expectDoneThenInterrupted(lines: string[], output: string, done: string) {
  const result = lines.findIndex((l) => DONE.test(l));
  const quit = lines.findIndex((l) => l.startsWith('Quitting at once'));
  if (quit >= 0) expect(result, output).toBeGreaterThanOrEqual(0);
  else expect(lines, output).toContain(done);
}

/**
 * 130 by its own exit, never killed by the signal. After the work was done the Ctrl-C may
 * find the process already gone (0), or closing (130 at once).
 */
function expectExit(exit: { code: number | null; signal: string | null }, late: boolean, output: string) {
  if (late)
    expect(
      [
        { code: 0, signal: null },
        { code: 130, signal: null },
      ],
      output,
    ).toContainEqual(exit);
  else expect(exit, output).toEqual({ code: 130, signal: null });
}

/** 20 runs in all: 8 of embed, 6 of update, 6 of collection add; about one in three Ctrl-C twice. */
const RUNS: Array<{ command: 'embed' | 'update' | 'add'; point: Point; twice: boolean }> = [];
for (let i = 0; i < 20; i++) {
  const command = i < 8 ? 'embed' : i < 14 ? 'update' : 'add';
  const first = random() < 0.2;
  const stage = command === 'embed' ? 'Embedding' : 'Indexing notes';
  const total = command === 'embed' ? CHUNKS : FILES;
  const point: Point = first ? { kind: 'first' } : { kind: 'past', stage, k: Math.floor(random() * total * 0.7) };
  RUNS.push({ command, point, twice: random() < 0.35 });
}

const describeRun = (r: (typeof RUNS)[number]) =>
  `${r.command}, Ctrl-C ${r.twice ? 'twice' : 'once'} at ${r.point.kind === 'first' ? 'the first thing drawn' : `${r.point.stage} past ${r.point.k}`}`;

describe(`Ctrl-C at random points (seed ${SEED}; QMD_TEST_SEED=${SEED} replays)`, () => {
  it.each(RUNS.map((r, i) => [i + 1, describeRun(r), r] as const))('run %i: %s', async (i, _, run) => {
    if (run.command === 'embed') {
      const index = copyOf(embedTemplate, `embed-${i}`);
      const { exit, late, output, lines } = await interrupted(['embed'], index, run.point, run.twice);
      expectExit(exit, late, output);
      const after = facts(index);
      expect(after.integrity).toBe('ok');
      const kept = lines
        .map((l) => /^Interrupted: ([\d,]+) of ([\d,]+) chunks embedded and saved/.exec(l))
        .find(Boolean);
      const early = lines.includes('Interrupted before anything was embedded; qmd embed goes on from there.');
      if (late) {
        expect(after.vectors).toBe(CHUNKS);
      } else if (early) {
        expect(after.vectors).toBe(0); // Ctrl-C while the model was being read: nothing embedded
      } else if (!run.twice) {
        if (kept) expect(after.vectors).toBe(count(kept[1]));
        else expectDoneThenInterrupted(lines, output, 'Interrupted after the work was done: every chunk is embedded.');
      } else {
        expect(
          lines.some((l) => /^(Quitting at once|Interrupted)/.test(l)),
          output,
        ).toBe(true);
      }
      const rest = await runQmd(['embed', '--json'], env(index));
      expect(rest.code, rest.stderr).toBe(0);
      const report = JSON.parse(rest.stdout) as { embedded: number; skipped: number; chunks: number };
      expect(report).toMatchObject({ chunks: CHUNKS, skipped: after.vectors, embedded: CHUNKS - after.vectors });
      expect(facts(index)).toMatchObject({ integrity: 'ok', vectors: CHUNKS });
    } else if (run.command === 'update') {
      const index = copyOf(updateTemplate, `update-${i}`);
      const { exit, late, output, lines } = await interrupted(['update'], index, run.point, run.twice);
      expectExit(exit, late, output);
      const after = facts(index);
      expect(after).toMatchObject({ integrity: 'ok', documents: FILES, fts: FILES });
      const kept = lines.map((l) => /^Interrupted: kept 0 added, ([\d,]+) updated, 0 removed/.exec(l)).find(Boolean);
      if (late) {
        expect(after.newText).toBe(FILES);
      } else if (!run.twice) {
        if (kept) expect(after.newText).toBe(count(kept[1]));
        else
          expectDoneThenInterrupted(
            lines,
            output,
            'Interrupted after the work was done: every collection is up to date.',
          );
      } else {
        // Whole batches of files only (256 a batch), whenever the second Ctrl-C landed.
        expect(after.newText % 256 === 0 || after.newText === FILES, `${after.newText} new`).toBe(true);
      }
      const rest = await runQmd(['update'], env(index));
      expect(rest.code, rest.stderr).toBe(0);
      expect(rest.stdout).toContain(`, ${FILES - after.newText} updated, 0 removed`);
      expect(facts(index)).toMatchObject({ integrity: 'ok', documents: FILES, fts: FILES, newText: FILES });
    } else {
      const index = join(ws.dir, `add-${i}.sqlite`);
      const { exit, late, output, lines } = await interrupted(
        ['collection', 'add', ws.notesDir, '--name', 'notes'],
        index,
        run.point,
        run.twice,
      );
      expectExit(exit, late, output);
      const kept = lines.map((l) => /^Interrupted: collection notes was added with ([\d,]+) of/.exec(l)).find(Boolean);
      if (!existsSync(index)) {
        // It made the index and added nothing to it: it leaves none, and said why.
        expect(
          lines.some((l) => /^(Interrupted before any file was read|Quitting at once)/.test(l)),
          output,
        ).toBe(true);
      } else {
        const after = facts(index);
        expect(after).toMatchObject({ integrity: 'ok' });
        expect(after.fts).toBe(after.documents);
        if (kept) expect(after.documents).toBe(count(kept[1]));
        else if (!run.twice || late) expect(after.documents).toBe(FILES);
        else expect(after.documents % 256 === 0 || after.documents === FILES, `${after.documents}`).toBe(true);
      }
      // What a person would type next: update if the collection is there, the add again if not.
      const added = existsSync(index) && facts(index).documents > 0;
      const rest = added
        ? await runQmd(['update'], env(index))
        : await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env(index));
      expect(rest.code, rest.stderr).toBe(0);
      expect(facts(index)).toMatchObject({ integrity: 'ok', documents: FILES, fts: FILES });
    }
  });
});

describe('Ctrl-C while the model downloads', () => {
  it('stops waiting for it at once: one line, exit 130, nothing embedded', async () => {
    // A host that sends the first 64 KiB of the model and then holds the rest for good.
    const model = readFileSync(tinyModelPath());
    const server = createServer((req, res) => {
      if ((req.url ?? '').split('?')[0] !== DEFAULT_MODEL_PATH) {
        res.writeHead(req.method === 'HEAD' ? 200 : 404).end();
        return;
      }
      res.writeHead(200, { 'content-length': model.length, 'accept-ranges': 'bytes' });
      res.write(model.subarray(0, 64 * 1024));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const index = copyOf(embedTemplate, 'download');
    const p = runInPty(process.execPath, [QMD_BIN, 'embed'], {
      env: qmdEnv(index, { XDG_CACHE_HOME: join(small.dir, 'cache'), HF_ENDPOINT: `http://127.0.0.1:${port}/` }),
    });
    try {
      await p.waitForOutput(/Downloading \[/, 60_000);
      p.write(CTRL_C);
      const exit = await ptyExit(p);
      expect(exit, p.output()).toEqual({ code: 130, signal: null });
      expect(screenLines(p.output())).toContain(
        'Interrupted before anything was embedded; qmd embed goes on from there.',
      );
      expect(facts(index)).toMatchObject({ integrity: 'ok', vectors: 0 });
    } finally {
      p.kill();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
