/**
 * How a vector and its rows are stored: the float copy as a BLOB, the int8 code a KNN reads,
 * the path as vec0 keeps it, and a folder as a range of paths (docs/design.md §8.2, §8.3).
 */

export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromBlob(blob: Uint8Array): Float32Array {
  // A view needs 4-byte alignment; SQLite's BLOBs do not promise it (better-sqlite3's Buffers were
  // measured at offset 0, but nothing says so).
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0) return Float32Array.from(vector);
  return vector.map((x) => x / norm);
}

/** The int8 code of `vector`: scaled so its largest component is ±127, then rounded (see above). */
export function toCode(vector: Float32Array): Buffer {
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x));
  const scale = max === 0 ? 0 : 127 / max;
  const code = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) code[i] = Math.round((vector[i] as number) * scale);
  return Buffer.from(code.buffer);
}

/**
 * The path as `chunk_codes` stores it. sqlite-vec 0.1.9 fails any comparison on a TEXT
 * metadata value of exactly 12 bytes ("Could not filter metadata fields": 12 bytes is the
 * prefix it keeps inline; 11 and 13 work, bench/experiments/vec/results-ivf.md), so one byte
 * 0x01 is appended to such a path. That keeps every folder range's answer (0x01 sorts below
 * every character a path or a range bound holds).
 */
export function codePath(path: string): string {
  return Buffer.byteLength(path) === 12 ? `${path}\u0001` : path;
}

/**
 * The rows under a folder, as a range on `path` (what vec0 accepts on a metadata column; it
 * refuses LIKE and GLOB): `notes/2024` is `path >= 'notes/2024/' AND path < 'notes/20240'`
 * ('0' follows '/'), so `notes/2024x/a.md` is not under it. Undefined for no folder.
 */
export function prefixRange(prefix: string | undefined): { low: string; high: string } | undefined {
  const folder = prefix?.replace(/^\/+|\/+$/g, '');
  if (folder === undefined || folder === '') return undefined;
  return { low: `${folder}/`, high: `${folder}0` };
}
