/**
 * `node22 bench/scale/peer-vectors.mjs PEER_STORE_JS INDEX MODEL`: the peer's counterpart of
 * embed-ours.ts. Writes a vector for every chunk of every active document of the peer's index
 * with the peer's own chunker (`chunkDocument`, 900 tokens ≈ 3,600 chars), its own document
 * prompt and `insertEmbedding`, the vectors from the same stand-in (a hashed bag of words,
 * same dimension as MODEL), so `qmd mcp` of the peer with QMD_EMBED_MODEL=MODEL searches them.
 */
import { performance } from 'node:perf_hooks';

const [storeJs, index, model, dimsText] = process.argv.slice(2);
const peer = await import(storeJs);
const llm = await import(new URL('./llm.js', `file://${storeJs}`).href);
const dims = Number(dimsText);
const started = performance.now();
const store = peer.createStore(index);
const db = store.db;
store.ensureVecTable(dims);
const docs = db
  .prepare(
    `SELECT d.hash, MIN(d.path) AS path, MIN(d.title) AS title, c.doc FROM documents d JOIN content c ON c.hash = d.hash
     WHERE d.active = 1 GROUP BY d.hash ORDER BY d.hash`,
  )
  .all();
const now = new Date().toISOString();
let chunks = 0;
db.exec('BEGIN');
docs.forEach((doc, i) => {
  const parts = peer.chunkDocument(doc.doc);
  parts.forEach((part, seq) => {
    const text = llm.formatDocForEmbedding(part.text, doc.title, model);
    peer.insertEmbedding(db, doc.hash, seq, part.pos, bagOfWords(text, dims), model, now, parts.length);
    chunks++;
  });
  if (i % 2000 === 1999) {
    db.exec('COMMIT');
    db.exec('BEGIN');
  }
});
db.exec('COMMIT');
store.close();
process.stdout.write(
  `${JSON.stringify({ documents: docs.length, chunks, ms: Math.round(performance.now() - started) })}\n`,
);

/** The same function as stand-in-embedder.ts's, normalized (the peer stores what it is given). */
function bagOfWords(text, n) {
  const vector = new Float32Array(n);
  for (const word of text.toLowerCase().match(/[a-z0-9]{2,}/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    for (let j = 0; j < 6; j++) {
      h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
      vector[h % n] += h & 0x10000 ? 1 : -1;
    }
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return vector.map((x) => x / norm);
}
