// What a whole-file `PRAGMA quick_check` costs a writer, against checks of only some b-trees
// (`PRAGMA quick_check(TABLE)`, SQLite >= 3.33: the table and its indexes; no partial check
// walks the freelist, not even `quick_check(sqlite_schema)`: measured in
// test/store/integrity.test.ts, a freelist leaf pointing at a page in use passes them all).
// CPU time (process.cpuUsage) and wall, each check in a fresh connection so the
// page cache of one does not serve the next (the OS page cache still does: warm, as a command
// run right after another finds it).
//
// Usage: node bench/experiments/quick-check-tables.mjs INDEX [ROUNDS] [TABLE…]
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const [file, rounds = '3', ...asked] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/experiments/quick-check-tables.mjs INDEX [ROUNDS] [TABLE…]');
  process.exit(2);
}
const tables =
  asked.length > 0
    ? asked
    : [
        '(whole file)',
        'sqlite_schema',
        'collections',
        'documents',
        'contexts',
        'embedding_state',
        'content',
        'documents_fts_data',
      ];
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${file}: ${(statSync(file).size / 2 ** 20).toFixed(1)} MiB, ${rounds} rounds, median`);
console.log('| checked | CPU ms | wall ms | answer |\n|:---|---:|---:|:---|');
for (const table of tables) {
  const cpus = [];
  const walls = [];
  let answer = '';
  for (let i = 0; i < Number(rounds); i++) {
    const db = new Database(file, { readonly: true });
    const sql = table === '(whole file)' ? 'PRAGMA quick_check' : `PRAGMA quick_check(${table})`;
    const c = cpu();
    const w = performance.now();
    answer = String(db.prepare(sql).pluck().get())
      .split('\n')
      .find((l) => !l.startsWith('***'));
    walls.push(performance.now() - w);
    cpus.push(cpu() - c);
    db.close();
  }
  console.log(`| ${table} | ${median(cpus).toFixed(1)} | ${median(walls).toFixed(1)} | ${answer.slice(0, 60)} |`);
}
