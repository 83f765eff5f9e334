// What `PRAGMA quick_check` costs `qmd status` and every `qmd mcp` start (issue 23): it reads
// the whole index. Usage: node bench/experiments/quick-check.mjs INDEX [ROUNDS]
// Measured (README, index problems): an 18 MB index of 5,000 generated notes of 300 words,
// Node 24.22.3 node:sqlite, opened read-only: min 188 ms, median 205 ms at load average 14.
import { statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

const [file, rounds = '5'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/experiments/quick-check.mjs INDEX [ROUNDS]');
  process.exit(2);
}
const db = new DatabaseSync(file, { readOnly: true });
const times = [];
for (let i = 0; i < Number(rounds); i++) {
  const started = performance.now();
  db.prepare('PRAGMA quick_check').all();
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
console.log(`| index | MB | rounds | min ms | median ms |\n|---|---|---|---|---|`);
console.log(
  `| ${file} | ${(statSync(file).size / 1e6).toFixed(1)} | ${rounds} | ${times[0].toFixed(1)} | ${times[Math.floor(times.length / 2)].toFixed(1)} |`,
);
