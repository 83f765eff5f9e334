/**
 * Helpers of the sqlite-vec experiments (Node ≥ 22: node:sqlite with sqlite-vec 0.1.9 loaded).
 * Vectors are seeded and clustered, like embeddings (2,000 centres; each vector a centre plus
 * noise of the same norm, cosine ≈ 0.7 to its centre); queries are held-out vectors of the
 * same distribution. Real vectors come from a qmd index (`embeddings.vector`).
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';

export const TMP = fileURLToPath(new URL('../../.tmp/vec-experiments/', import.meta.url));

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(random) {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export function normalize(v) {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

/** `count` clustered unit vectors of `dims`, deterministic for `seed`. */
export function* clustered(count, dims, seed, centres = 2000) {
  const random = mulberry32(seed);
  const cs = [];
  for (let c = 0; c < centres; c++) cs.push(normalize(Float32Array.from({ length: dims }, () => gaussian(random))));
  const s = 1 / Math.sqrt(dims);
  for (let i = 0; i < count; i++) {
    const centre = cs[Math.floor(random() * centres)];
    const v = new Float32Array(dims);
    for (let d = 0; d < dims; d++) v[d] = centre[d] + s * gaussian(random);
    yield normalize(v);
  }
}

export function open(file, { fresh = true } = {}) {
  mkdirSync(TMP, { recursive: true });
  const path = join(TMP, file);
  if (fresh) for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  const db = new DatabaseSync(path, { allowExtension: true });
  db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  return { db, path };
}

export function bytesOf(path) {
  let total = 0;
  for (const suffix of ['', '-wal']) if (existsSync(path + suffix)) total += statSync(path + suffix).size;
  return total;
}

export function blob(v) {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

export function time(fn) {
  const t = performance.now();
  const result = fn();
  return { ms: performance.now() - t, result };
}

export function quantile(values, q) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo] + (s[hi] - s[lo]) * (at - lo);
}

export function fmt(ms) {
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

/** Inserts rows in transactions of `batch`. */
export function bulk(db, sql, rows, batch = 5000) {
  const statement = db.prepare(sql);
  let n = 0;
  db.exec('BEGIN');
  for (const row of rows) {
    statement.run(...row);
    if (++n % batch === 0) {
      db.exec('COMMIT');
      db.exec('BEGIN');
    }
  }
  db.exec('COMMIT');
  return n;
}

export function loadAverage() {
  return (globalThis.process?.platform === 'linux' ? require_os().loadavg() : [0, 0, 0])
    .map((x) => x.toFixed(2))
    .join(' ');
}
function require_os() {
  return createRequire(import.meta.url)('node:os');
}
