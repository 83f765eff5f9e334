// What mode SQLite gives the index's -wal and -shm (issue 34: the index private by default).
// Usage: node bench/experiments/private-modes.mjs [--node-sqlite] (under each Node). Measured
// with node:sqlite and with better-sqlite3 13.2.0 (the store's binding since issue 35; SQLite
// 3.54.1 in both) on Node 22.23.5 and 24.22.3, all alike:
//   SQLite makes the file, umask 022: db 644, -wal 644, -shm 644
//   the file made 0600 first, umask 022: db 600, -wal 600, -shm 600
//   an existing 0644 file, umask 077: db 644, -wal 644, -shm 644
//   the same file chmod 600, umask 022: db 600, -wal 600, -shm 600
// So -wal and -shm take the database file's mode whatever the umask (SQLite's unix VFS sets
// it with fchmod): making the index 0600 before SQLite first opens it is enough, and a
// umask alone is not (an index made open stays open).
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// exec() and close() are the same on both.
const DatabaseSync = process.argv.includes('--node-sqlite')
  ? process.getBuiltinModule('node:sqlite').DatabaseSync
  : createRequire(import.meta.url)('better-sqlite3');

const dir = mkdtempSync(join(tmpdir(), 'qmd-modes-'));
const mode = (f) => (existsSync(f) ? (statSync(f).mode & 0o777).toString(8) : '-');
const report = (label, f) => console.log(`${label}: db ${mode(f)}, -wal ${mode(`${f}-wal`)}, -shm ${mode(`${f}-shm`)}`);
/** Writes through a WAL connection and reports the modes while it is open. */
function write(label, f, umask) {
  const before = process.umask(umask);
  const db = new DatabaseSync(f);
  db.exec('PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (1);');
  report(label, f);
  db.close();
  process.umask(before);
}
write('SQLite makes the file, umask 022', join(dir, 'plain.sqlite'), 0o022);
const pre = join(dir, 'pre.sqlite');
closeSync(openSync(pre, 'wx', 0o600));
write('the file made 0600 first, umask 022', pre, 0o022);
write('an existing 0644 file, umask 077', join(dir, 'plain.sqlite'), 0o077);
chmodSync(join(dir, 'plain.sqlite'), 0o600);
write('the same file chmod 600, umask 022', join(dir, 'plain.sqlite'), 0o022);
rmSync(dir, { recursive: true, force: true });
