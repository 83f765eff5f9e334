/**
 * src/store/database.ts's connection settings: what every store connection runs with, whatever
 * the SQLite build's own defaults (better-sqlite3's and Node's differ: docs/design.md §5).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/log.js';
import { closeDatabase, openDatabase } from '../../src/store/database.js';
import { type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

describe('openDatabase', () => {
  it('sets WAL, synchronous NORMAL, foreign keys, a 16 MB page cache and recursive triggers off', () => {
    for (const readonly of [false, true]) {
      const opened = openDatabase(box.index, { readonly, busyTimeoutMs: 2000, quickCheck: false });
      const { db } = opened;
      try {
        expect(db.pragmaValue('journal_mode')).toBe('wal');
        expect(db.pragmaValue('synchronous')).toBe(1);
        expect(db.pragmaValue('foreign_keys')).toBe(1);
        expect(db.pragmaValue('cache_size')).toBe(-16000);
        expect(db.pragmaValue('recursive_triggers')).toBe(0);
        expect(db.pragmaValue('busy_timeout')).toBe(2000);
        expect(db.pragmaValue('query_only')).toBe(readonly ? 1 : 0);
      } finally {
        closeDatabase(opened, silentLog);
      }
    }
  });
});
