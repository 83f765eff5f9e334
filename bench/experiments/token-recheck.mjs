// What re-checking the HTTP token file on every request costs (issue 34: a token rewritten on
// disk must take effect without a restart, and a deleted file must stop the old token). Usage:
// node bench/experiments/token-recheck.mjs [ROUNDS]. Per call, in µs: an lstat with BigInt
// times (what `qmd mcp --http` does on each request, re-reading only when the file changed),
// against reading the file each time, and the SHA-256 comparison every request pays anyway.
// Measured (200,000 rounds, load 11): lstat 12.79 / 9.79 µs (Node 24.22.3 / 22.23.5), read
// 35.48 / 31.26 µs, SHA-256 + compare 11.56 / 6.15 µs. So qmd stats on every request and reads
// only on a change (or a second after the last read).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const rounds = Number(process.argv[2] ?? 200_000);
const dir = mkdtempSync(join(tmpdir(), 'qmd-token-'));
const file = join(dir, 'index.sqlite.mcp-token');
const token = randomBytes(32).toString('base64url');
writeFileSync(file, `${token}\n`, { mode: 0o600 });
const expected = createHash('sha256').update(token).digest();

function time(label, fn) {
  for (let i = 0; i < 2000; i++) fn();
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn();
  const us = Number(process.hrtime.bigint() - started) / 1000 / rounds;
  console.log(`| ${label} | ${us.toFixed(2)} |`);
}

console.log(`Node ${process.version}, ${rounds} rounds\n\n| per request | µs |\n|---|---|`);
let sink = 0n;
time('lstat (bigint), compare ino/size/mtime/ctime', () => {
  const s = lstatSync(file, { bigint: true });
  sink ^= s.ino ^ s.size ^ s.mtimeNs ^ s.ctimeNs;
});
time('read the file', () => {
  sink ^= BigInt(readFileSync(file, 'utf8').length);
});
time('sha-256 + timingSafeEqual (every request, already)', () => {
  sink ^= timingSafeEqual(createHash('sha256').update(token).digest(), expected) ? 1n : 0n;
});
rmSync(dir, { recursive: true, force: true });
if (sink === -1n) console.log('');
