/** Today's filtered vector search, in miniature: every BLOB vector read and compared in JS. */
export function scan(db, queryBytes, k) {
  const q = new Float32Array(
    queryBytes.buffer.slice(queryBytes.byteOffset, queryBytes.byteOffset + queryBytes.byteLength),
  );
  const found = [];
  for (const row of db.prepare('SELECT id, vector FROM v').iterate()) {
    const b = row.vector;
    const x = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    let s = 0;
    for (let d = 0; d < q.length; d++) s += q[d] * x[d];
    found.push(s);
  }
  found.sort((a, b) => b - a);
  return Math.min(k, found.length);
}
