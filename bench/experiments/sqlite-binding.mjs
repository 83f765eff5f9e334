// Which SQLite binding qmd should stand on, measured (docs/design.md §5 "The SQLite binding").
// One process = one binding on the Node that runs it:
//   node bench/experiments/sqlite-binding.mjs --binding node|b13|b12 --mode bench
//   node --expose-gc bench/experiments/sqlite-binding.mjs --binding b12 --mode soak --path natural
// `b13` loads the repo's own better-sqlite3 (13.2.0 since issue 35), `b12` a scratch install
// outside the repo ($BIND_DIR, or /work/scratch/bind-<node major>-b12). `node` is node:sqlite.
// The driver (sqlite-binding-driver.mjs) runs these interleaved and writes the results file.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const here = new URL('.', import.meta.url).pathname;
const repo = join(here, '..', '..');
const args = isMainThread ? parseArgs(process.argv.slice(2)) : workerData.args;
const major = process.versions.node.split('.')[0];
const vecPath = createRequire(join(repo, 'package.json'))('sqlite-vec').getLoadablePath();

function parseArgs(argv) {
  const out = {
    binding: 'node',
    mode: 'bench',
    path: 'natural',
    notes: 10000,
    queries: 300,
    vectors: 20000,
    statements: 12000,
  };
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['notes', 'queries', 'vectors', 'statements']) out[k] = Number(out[k]);
  return out;
}

/** `b13` is the repo's own better-sqlite3 (issue 35); `b12` a scratch install ($BIND_DIR or /work/scratch/bind-<major>-b12). */
function requireBinding(binding) {
  if (binding === 'b13' && process.env.BIND_DIR === undefined) return createRequire(join(repo, 'package.json'));
  const dir = process.env.BIND_DIR ?? `/work/scratch/bind-${major}-${binding}`;
  return createRequire(join(dir, 'node_modules', 'x.js'));
}

/** Opens a database through the chosen binding; both expose exec/prepare/close and run/get/all/iterate. */
async function open(binding, file, { readOnly = false } = {}) {
  if (binding === 'node') {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file, { allowExtension: true, readOnly });
    db.loadExtension(vecPath);
    return db;
  }
  const Database = requireBinding(binding)('better-sqlite3');
  const db = new Database(file, { readonly: readOnly });
  db.loadExtension(vecPath);
  return db;
}

function bindingVersion(binding, db) {
  const sqlite = db.prepare('SELECT sqlite_version() AS v, vec_version() AS vec').get();
  if (binding === 'node') return { lib: 'node:sqlite', sqlite: sqlite.v, vec: sqlite.vec };
  const pkg = requireBinding(binding)('better-sqlite3/package.json');
  return { lib: `better-sqlite3 ${pkg.version}`, sqlite: sqlite.v, vec: sqlite.vec };
}

// ---------- the corpus: 10,000 notes of 2–4 KB cut from markdown already on disk ----------

function markdownFiles(dir, out = [], depth = 0) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory() && depth < 12) markdownFiles(p, out, depth + 1);
    else if (e.isFile() && e.name.toLowerCase().endsWith('.md')) out.push(p);
  }
  return out;
}

function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function corpus(count) {
  const files = [join(repo, 'node_modules'), '/work/runtimes', '/usr/share/doc'].flatMap((d) => markdownFiles(d));
  const paragraphs = [];
  for (const f of files) {
    if (statSync(f).size > 2_000_000) continue;
    for (const p of readFileSync(f, 'utf8').split(/\n\s*\n/)) {
      const t = p.trim();
      if (t.length >= 60 && t.length <= 1500) paragraphs.push(t);
    }
  }
  const rand = prng(42);
  const notes = [];
  for (let i = 0; i < count; i++) {
    const target = 2048 + Math.floor(rand() * 2048);
    let body = '';
    while (body.length < target) body += `${paragraphs[Math.floor(rand() * paragraphs.length)]}\n\n`;
    body = body.slice(0, target);
    const title = body.split('\n')[0].replace(/[#*`]/g, '').trim().slice(0, 80) || `note ${i}`;
    notes.push({ path: `notes/${i}.md`, title, body });
  }
  return { notes, files: files.length, paragraphs: paragraphs.length };
}

function queriesFrom(notes, n) {
  const rand = prng(7);
  const out = [];
  while (out.length < n) {
    const words = notes[Math.floor(rand() * notes.length)].body.match(/[A-Za-z]{4,}/g) ?? [];
    if (words.length < 3) continue;
    const k = 1 + Math.floor(rand() * 3);
    const picked = [];
    for (let j = 0; j < k; j++) picked.push(`"${words[Math.floor(rand() * words.length)].toLowerCase()}"`);
    out.push(picked.join(' '));
  }
  return out;
}

// The shape of src/store/schema/schema.ts v1: content once, documents, external-content FTS5 via a view.
const schema = `
CREATE TABLE content (hash TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;
CREATE TABLE documents (
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
  hash TEXT NOT NULL REFERENCES content(hash)) STRICT;
CREATE VIEW document_text(id, title, body) AS
  SELECT d.id, d.title, c.body FROM documents d JOIN content c ON c.hash = d.hash;
CREATE VIRTUAL TABLE documents_fts USING fts5(title, body,
  content = 'document_text', content_rowid = 'id', tokenize = 'porter unicode61');
CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
  INSERT INTO documents_fts(rowid, title, body) SELECT NEW.id, NEW.title, body FROM content WHERE hash = NEW.hash;
END;
CREATE VIRTUAL TABLE vectors USING vec0(embedding float[64]);
`;

/** CPU time (user + system) of this process since `start`, in ms: what the neighbours do not add. */
const cpuMs = (start) => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function bench() {
  const t0 = performance.now();
  const { notes, files, paragraphs } = corpus(args.notes);
  const corpusMs = performance.now() - t0;
  const dir = mkdtempSync(join(tmpdir(), 'bindbench-'));
  const db = await open(args.binding, join(dir, 'index.sqlite'));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
  db.exec(schema);
  const { createHash } = await import('node:crypto');

  const insertContent = db.prepare('INSERT OR IGNORE INTO content(hash, body) VALUES (?, ?)');
  const insertDoc = db.prepare('INSERT INTO documents(path, title, hash) VALUES (?, ?, ?)');
  const hashes = notes.map((n) => createHash('sha256').update(n.body).digest('hex'));
  let t = performance.now();
  let cpu = process.cpuUsage();
  db.exec('BEGIN');
  for (let i = 0; i < notes.length; i++) {
    insertContent.run(hashes[i], notes[i].body);
    insertDoc.run(notes[i].path, notes[i].title, hashes[i]);
  }
  db.exec('COMMIT');
  const indexMs = performance.now() - t;
  const indexCpuMs = cpuMs(cpu);

  const search = db.prepare(
    `SELECT d.path, d.title, r.score FROM (
       SELECT rowid AS id, bm25(documents_fts, 2.0, 1.0) AS score FROM documents_fts
       WHERE documents_fts MATCH ? ORDER BY score LIMIT 10) r JOIN documents d ON d.id = r.id ORDER BY r.score`,
  );
  const queries = queriesFrom(notes, args.queries);
  for (const q of queries.slice(0, 20)) search.all(q); // warm the page cache
  const ftsTimes = [];
  let hits = 0;
  cpu = process.cpuUsage();
  for (const q of queries) {
    t = performance.now();
    hits += search.all(q).length;
    ftsTimes.push(performance.now() - t);
  }
  const ftsCpuMs = cpuMs(cpu) / queries.length;

  const rand = prng(3);
  const vec = () => {
    const v = new Float32Array(64);
    let norm = 0;
    for (let j = 0; j < 64; j++) {
      v[j] = rand() - 0.5;
      norm += v[j] ** 2;
    }
    for (let j = 0; j < 64; j++) v[j] /= Math.sqrt(norm);
    return new Uint8Array(v.buffer);
  };
  const insertVec = db.prepare('INSERT INTO vectors(rowid, embedding) VALUES (?, ?)');
  t = performance.now();
  db.exec('BEGIN');
  for (let i = 1; i <= args.vectors; i++) insertVec.run(BigInt(i), vec());
  db.exec('COMMIT');
  const vecInsertMs = performance.now() - t;
  const knn = db.prepare('SELECT rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance');
  const knnTimes = [];
  const knnQueries = Array.from({ length: 200 }, vec);
  cpu = process.cpuUsage();
  for (let i = 0; i < 200; i++) {
    t = performance.now();
    const rows = knn.all(knnQueries[i], 10);
    knnTimes.push(performance.now() - t);
    if (rows.length !== 10) throw new Error(`KNN returned ${rows.length} rows`);
  }
  const knnCpuMs = cpuMs(cpu) / 200;
  const version = bindingVersion(args.binding, db);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  ftsTimes.sort((a, b) => a - b);
  knnTimes.sort((a, b) => a - b);
  const result = {
    node: process.version,
    binding: args.binding,
    ...version,
    corpus: { notes: notes.length, sourceFiles: files, paragraphs, ms: Math.round(corpusMs) },
    notesPerSec: Math.round(notes.length / (indexMs / 1000)),
    notesPerCpuSec: Math.round(notes.length / (indexCpuMs / 1000)),
    ftsCpuMs,
    knnCpuMs,
    ftsP50: percentile(ftsTimes, 50),
    ftsP95: percentile(ftsTimes, 95),
    ftsHitsPerQuery: hits / queries.length,
    vectorsPerSec: Math.round(args.vectors / (vecInsertMs / 1000)),
    knnP50: percentile(knnTimes, 50),
    knnP95: percentile(knnTimes, 95),
  };
  console.log(JSON.stringify(result));
}

// ---------- the GC soak: statements created and dropped, forced and task GCs, every exit path ----------

const gc = globalThis.gc ?? (() => {});
/** A GC run from a V8 task, outside any JS frame: where a finalizer meets no current environment. */
const taskGc = () => (globalThis.gc ? globalThis.gc({ type: 'major', execution: 'async' }) : undefined);
const tick = () => new Promise((r) => setTimeout(r, 1));

/** Holds statements the way a store object does; nobody closes it, the GC collects it. */
class Holder {
  constructor(db, i) {
    this.byId = db.prepare(`SELECT id, body FROM t WHERE id = ? -- holder ${i}`);
    this.scan = db.prepare(`SELECT id FROM t WHERE id > ? -- holder scan ${i}`);
    this.it = this.scan.iterate(i % 100);
    this.it.next(); // left open
  }
}

async function churn(db, n, { held = [], idle = true, tidy = false } = {}) {
  for (let i = 0; i < n; i++) {
    const s = db.prepare(`SELECT id, body FROM t WHERE id > ? LIMIT 3 -- ${i}`);
    s.all(i % 200);
    if (i % 40 === 0) held.push(new Holder(db, i));
    if (i % 1000 === 999) {
      gc(); // forced, with statements live
      // Drop half the holders: garbage with open iterators, or (tidy) returned by their owner first.
      for (const h of held.splice(0, held.length >> 1)) if (tidy) h.it.return();
      taskGc();
      if (idle) await tick(); // let V8's own tasks (incremental marking, async GC) run
    }
  }
  return held;
}

async function smallDb(binding) {
  const dir = mkdtempSync(join(tmpdir(), 'bindsoak-'));
  const db = await open(binding, join(dir, 's.sqlite'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT); BEGIN;');
  const ins = db.prepare('INSERT INTO t(body) VALUES (?)');
  for (let i = 0; i < 500; i++) ins.run(`row ${i} `.repeat(10));
  db.exec('COMMIT');
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return db;
}

const registry = new FinalizationRegistry((db) => {
  try {
    db.close();
  } catch (error) {
    console.error(`finalizer could not close: ${error.message}`); // better-sqlite3: open iterators make it busy
  }
});

async function soak() {
  const n = args.statements;
  if (!isMainThread && args.path === 'worker-terminate-statement') {
    // The query worker's shape: a read-only connection of its own, terminated while SQLite
    // runs one of back-to-back statements (terminate() cannot interrupt one: it lands when the
    // statement returns to JS). Almost no JS runs between them, so that is where it lands.
    const db = await open(args.binding, workerData.file, { readOnly: true });
    parentPort.postMessage('ready');
    const long = db.prepare(
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000) SELECT count(*) AS n FROM c',
    );
    for (;;) long.get();
  }
  if (!isMainThread) {
    // Inside a worker: churn until terminated, or finish and leave everything for teardown.
    const db = await smallDb(args.binding);
    parentPort.postMessage('ready');
    const held = await churn(db, n);
    parentPort.postMessage(`done ${held.length}`);
    return;
  }
  const path = args.path;
  if (path === 'worker-terminate-statement') {
    const db = await smallDb(args.binding);
    db.exec('PRAGMA journal_mode = WAL');
    const file = db.name ?? db.location();
    const worker = new Worker(new URL(import.meta.url), { workerData: { args, file }, execArgv: [] });
    await new Promise((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (m) => {
        if (m === 'ready') setTimeout(() => worker.terminate(), 300);
      });
      worker.on('exit', resolve);
    });
    await churn(db, 2000); // the main connection keeps working after the worker
    gc();
    return;
  }
  if (path === 'worker-terminate' || path === 'worker-exit') {
    const worker = new Worker(new URL(import.meta.url), { workerData: { args }, execArgv: [] });
    await new Promise((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (m) => {
        if (m === 'ready' && path === 'worker-terminate') setTimeout(() => worker.terminate(), 300);
      });
      worker.on('exit', resolve);
    });
    const db = await smallDb(args.binding); // the main thread keeps working after the worker
    await churn(db, 2000);
    gc();
    return;
  }
  const db = await smallDb(args.binding);
  if (path === 'finalizer') {
    // The Database is owned by an object that is collected after the work; a finalizer closes it.
    let owner = { db };
    registry.register(owner, db);
    await churn(owner.db, n);
    owner = null;
    gc();
    taskGc();
    await tick();
    return; // natural exit: the statements go to teardown
  }
  const tidy = path === 'close-exit' || path === 'close-nogc-exit';
  const held = await churn(db, n, { tidy });
  const it = db.prepare('SELECT id FROM t').iterate();
  it.next(); // an iterator left open on every path
  let late = [];
  for (let i = 0; i < 2000; i++) late.push({ s: db.prepare(`SELECT ${i} AS x`) });
  late = null; // 2,000 statements become garbage right before the exit
  taskGc();
  switch (path) {
    case 'natural':
      return; // no close
    case 'exit-mid-iteration':
      for (const _row of db.prepare('SELECT id FROM t').iterate()) process.exit(0);
      return;
    case 'close-exit':
      // An owner that finalizes: every iterator returned, then close (which finalizes the statements).
      it.return();
      for (const h of held) h.it.return();
      gc();
      db.close();
      gc();
      process.exit(0);
      return;
    case 'close-nogc-exit':
      // The same owner, without the synchronous gc() before exit: close() finalizes every
      // SQLite statement, yet the statements' JS wrappers are still collected later.
      it.return();
      for (const h of held) h.it.return();
      db.close();
      process.exit(0);
      return;
    case 'uncaught':
      setImmediate(() => {
        throw new Error('soak: uncaught on purpose');
      });
      return;
    case 'sigterm':
      process.on('SIGTERM', () => process.exit(0));
      process.kill(process.pid, 'SIGTERM');
      await new Promise(() => setInterval(() => churn(db, 10, { idle: false }), 1));
      return;
    default:
      throw new Error(`unknown --path ${path}`);
  }
}

if (args.mode === 'bench') await bench();
else if (args.mode === 'soak') await soak();
else throw new Error(`unknown --mode ${args.mode}`);
