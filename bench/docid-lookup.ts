/**
 * qmd 2.x's docids at scale, and what checking a served text against its hash costs.
 *
 * 1. An index of N notes (default 100,000; rows written through the schema's own triggers, FTS
 *    included, so the file is a real index), then `get` by our docid, by a qmd 2.x docid (the
 *    range over `documents_by_hash`), and the same prefix as qmd 2.8.3 looks it up (`hash LIKE
 *    'abc123%'`, which no index serves), in process, p50/p90 of many ids; and `qmd get
 *    '#abc123'` spawned, as a person runs it.
 * 2. How many 6-digit starts the N hashes share (measured) beside the birthday bound, and the
 *    same for our 8-digit docids.
 * 3. The check `get` makes (`textMatchesHash`: one SHA-256 of the text served): µs per KB from
 *    1 KB to the largest note indexed (10 MiB).
 * 4. Schema 7 on an index of N notes (its read of every text for U+FFFD), once.
 *
 * Run: `npm run build && npx tsx bench/docid-lookup.ts [--notes 100000] [--lookups 2000]`.
 * Prints the tables and writes `bench/results-docids.md`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/core/index.js';
import { Sqlite } from '../src/store/sqlite.js';
import { textMatchesHash } from '../src/text/content-hash.js';
import { qmdEnv, runQmd } from '../test/support/qmd.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { ROOT, TMP } from './lib/paths.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    notes: { type: 'string', default: '100000' },
    lookups: { type: 'string', default: '2000' },
    spawned: { type: 'string', default: '10' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results-docids.md') },
  },
});
const NOTES = Number(values.notes);
const LOOKUPS = Number(values.lookups);
const SPAWNED = Number(values.spawned);
const m = machineInfo();
const lines: string[] = [];
const say = (line = ''): void => {
  console.log(line);
  lines.push(line);
};

mkdirSync(TMP, { recursive: true });
const dir = mkdtempSync(join(TMP, 'docids-'));
const index = join(dir, 'index.sqlite');
const notes = join(dir, 'notes');
mkdirSync(notes);
writeFileSync(join(notes, 'seed.md'), '# Seed\n\nThe collection row and the schema come from a real add.\n');

// 1. The index: a real add for the schema and the collection, then N rows through the triggers.
const store = openStore(index);
await store.addCollection(notes, { name: 'notes' });
await store.close();
const started = performance.now();
/** Our docids that had to grow past 8 digits (taken), as `newDocid` grows them. */
let grown = 0;
const words = 'wal checkpoint page index note sqlite vector cell journal lock btree header'.split(' ');
{
  const db = new Sqlite(index);
  const content = db.prepare<[string, string]>('INSERT OR IGNORE INTO content (hash, body) VALUES (?, ?)');
  const doc = db.prepare<[string, string, string, string]>(
    `INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at)
     VALUES ('notes', ?, ?, ?, ?, 0, 0, '2026-12-07T00:00:00.000Z')`,
  );
  db.exec('BEGIN');
  const taken = new Set<string>();
  for (let i = 0; i < NOTES; i++) {
    const body = `# Note ${i}\n\n${Array.from({ length: 40 }, (_, w) => words[(i * 7 + w * 13) % words.length]).join(' ')} n${i}\n`;
    const hash = createHash('sha256').update(body).digest('hex');
    const path = `d${i % 100}/n${i}.md`;
    content.run(hash, body);
    // As IndexWriter.newDocid: 8 digits, 2 more while taken.
    const full = createHash('sha256').update(`notes/${path}`).digest('hex');
    let length = 8;
    while (taken.has(full.slice(0, length))) length += 2;
    if (length > 8) grown++;
    taken.add(full.slice(0, length));
    doc.run(path, full.slice(0, length), `Note ${i}`, hash);
  }
  db.exec('COMMIT');
  db.exec('ANALYZE');
  db.close();
}
const built = (performance.now() - started) / 1000;

const db = new Sqlite(index, { readOnly: true });
const rows = db
  .prepare<[], { path: string; docid: string; hash: string }>('SELECT path, docid, hash FROM documents')
  .all();
const starts = new Map<string, number>();
for (const row of rows) starts.set(row.hash.slice(0, 6), (starts.get(row.hash.slice(0, 6)) ?? 0) + 1);
const unique = rows.filter((row) => starts.get(row.hash.slice(0, 6)) === 1);
const plan = db
  .prepare<[string], { detail: string }>("EXPLAIN QUERY PLAN SELECT path FROM documents WHERE hash LIKE ? || '%'")
  .all('abc123')
  .map((r) => r.detail)
  .join('; ');
db.close();

const reader = openStore(index, { readonly: true });
const time = (work: () => void): number => {
  const t = performance.now();
  work();
  return (performance.now() - t) * 1000;
};
const pick = (i: number) => unique[(i * 7919) % unique.length] as (typeof unique)[number];
const ours: number[] = [];
const peer: number[] = [];
const scanned: number[] = [];
for (let i = 0; i < LOOKUPS; i++) {
  const row = pick(i);
  ours.push(time(() => reader.get(`#${row.docid}`)));
  peer.push(time(() => reader.get(`#${row.hash.slice(0, 6)}`)));
}
{
  const raw = new Sqlite(index, { readOnly: true });
  const likeAgain = raw.prepare<[string], { path: string }>(
    "SELECT path FROM documents WHERE hash LIKE ? || '%' LIMIT 6",
  );
  for (let i = 0; i < Math.min(50, LOOKUPS); i++) scanned.push(time(() => likeAgain.all(pick(i).hash.slice(0, 6))));
  raw.close();
}
await reader.close();

const spawned: number[] = [];
for (let i = 0; i < SPAWNED; i++) {
  const row = pick(i);
  const t = performance.now();
  const run = await runQmd(['get', `#${row.hash.slice(0, 6)}`], qmdEnv(index));
  spawned.push(performance.now() - t);
  if (run.code !== 0) throw new Error(`qmd get: ${run.stderr}`);
}

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(0)} µs`);
const row = (label: string, samples: number[], unit: 'us' | 'ms', note = '') => {
  const s = summarize(samples);
  const f = unit === 'us' ? fmt : (ms: number) => `${ms.toFixed(0)} ms`;
  say(`| ${label} | ${s.n} | ${f(s.p50)} | ${f(s.p90)} | ${f(s.max)} | ${note} |`);
};
say('# qmd 2.x docids at scale, and the stored-text check (`bench/docid-lookup.ts`)');
say();
say(
  `Generated by \`npx tsx bench/docid-lookup.ts --notes ${NOTES} --lookups ${LOOKUPS}\` on ${m.date}; commit ${m.commit}; ` +
    `Node ${m.node}; ${m.cpuCount} × ${m.cpuModel}; load ${m.loadAtStart} at start (shared machine).`,
);
say();
say(`## 1. get by docid at ${NOTES.toLocaleString('en-US')} notes (index built in ${built.toFixed(0)} s)`);
say();
say('| lookup | n | p50 | p90 | max | how |');
say('| --- | ---: | ---: | ---: | ---: | --- |');
row('`get #1a2b3c4d` (ours), in process', ours, 'us', 'exact, `documents.docid` UNIQUE');
row(
  '`get #abc123` (qmd 2.x), in process',
  peer,
  'us',
  'ours first, then `hash >= ? AND hash < ?` on `documents_by_hash`',
);
row("qmd 2.8.3's form, `hash LIKE 'abc123%'`", scanned, 'us', `no index: ${plan}`);
row('`qmd get #abc123`, spawned', spawned, 'ms', 'the whole command: start, open, look up, print, exit');
say();

// 2. Collisions.
const shared = [...starts.values()].filter((n) => n > 1);
const pairs = (n: number, space: number) => (n * (n - 1)) / 2 / space;
const chance = (n: number, space: number) => 1 - Math.exp(-pairs(n, space));
say('## 2. How often a docid is shared');
say();
say('| notes | 6 hex (qmd 2.x): expected pairs | P(any shared) | 8 hex (ours): expected pairs | P(any shared) |');
say('| ---: | ---: | ---: | ---: | ---: |');
for (const n of [1_000, 5_000, 10_000, 100_000, 1_000_000]) {
  say(
    `| ${n.toLocaleString('en-US')} | ${pairs(n, 16 ** 6).toFixed(n < 10_000 ? 3 : 0)} | ${(chance(n, 16 ** 6) * 100).toFixed(1)}% | ${pairs(n, 16 ** 8).toFixed(3)} | ${(chance(n, 16 ** 8) * 100).toFixed(2)}% |`,
  );
}
say();
say(
  `Measured on these ${NOTES.toLocaleString('en-US')} distinct texts: ${shared.length} six-digit starts shared ` +
    `(${shared.reduce((a, b) => a + b, 0)} notes; the bound expects ${pairs(NOTES, 16 ** 6).toFixed(0)} pairs). ` +
    `Ours never collide: a taken id grows by 2 digits at indexing (\`index-writer.ts\`), and stays; here ${grown} of ${NOTES.toLocaleString('en-US')} grew to 10.`,
);
say();

// 3. The check's cost.
say('## 3. The check `get` makes: one SHA-256 of the text served');
say();
say('| text | n | p50 | µs per KB (p50) |');
say('| ---: | ---: | ---: | ---: |');
for (const kb of [1, 4, 16, 64, 256, 1024, 10 * 1024]) {
  const text = randomBytes((kb * 1024 * 3) / 4).toString('base64');
  const hash = createHash('sha256').update(text).digest('hex');
  const n = kb >= 1024 ? 20 : 500;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(time(() => textMatchesHash(text, hash)));
  const s = summarize(samples);
  say(`| ${kb >= 1024 ? `${kb / 1024} MiB` : `${kb} KiB`} | ${n} | ${fmt(s.p50)} | ${(s.p50 / kb).toFixed(2)} |`);
}
say();

// 4. Schema 7 on this index, once (its scan of every text for U+FFFD).
{
  const opening = async (version?: number): Promise<number> => {
    if (version !== undefined) {
      const raw = new Sqlite(index);
      raw.pragma(`user_version = ${version}`);
      raw.close();
    }
    const t = performance.now();
    const again = openStore(index);
    const ms = performance.now() - t;
    await again.close();
    return ms;
  };
  const current = await opening();
  const migrating = await opening(6);
  // The migration's own read, alone: every text searched for U+FFFD.
  const raw = new Sqlite(index, { readOnly: true });
  const mb = (raw.value<number>('SELECT sum(length(CAST(body AS BLOB))) FROM content') ?? 0) / 2 ** 20;
  const scans: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    raw.prepare("SELECT hash, body FROM content WHERE instr(CAST(body AS BLOB), X'EFBFBD') > 0").all();
    scans.push(performance.now() - t);
  }
  raw.close();
  const scan = summarize(scans).p50;
  say(`## 4. Schema 7 at ${NOTES.toLocaleString('en-US')} notes`);
  say();
  say(
    `A writer's open (quick_check included): ${current.toFixed(0)} ms at schema 7, ${migrating.toFixed(0)} ms at schema 6, ` +
      `once. The migration's read of every text for U+FFFD alone: ${scan.toFixed(0)} ms over ${mb.toFixed(1)} MiB of text ` +
      `(p50 of 5), ${((scan / mb) * 100).toFixed(0)} ms per 100 MiB: about ${((scan / mb) * 0.293).toFixed(1)} s for 100,000 notes of 3 KB (293 MiB).`,
  );
  say();
}
say(`Load at the end: ${loadAverage()}.`);
writeFileSync(values.out, `${lines.join('\n')}\n`);
rmSync(dir, { recursive: true, force: true });
console.error(`wrote ${values.out}`);
