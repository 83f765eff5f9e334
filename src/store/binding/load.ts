import { createRequire } from 'node:module';

/** better-sqlite3's surface that qmd uses (13.x ships no type declarations). */
export interface NativeStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
  run(...params: unknown[]): { changes: number; lastInsertRowid: number };
  pluck(toggle?: boolean): NativeStatement;
}

export interface NativeDatabase {
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): NativeStatement;
  exec(sql: string): unknown;
  loadExtension(file: string): unknown;
  close(): unknown;
}

export interface Binding {
  new (file: string, options: { readonly: boolean; timeout: number }): NativeDatabase;
  SqliteError: new (message: string, code: string) => Error & { code: string };
}

/**
 * better-sqlite3 as its package loads itself: what runs from the sources (tests, `tsx`). The
 * bundle runs `load-bundled.ts` instead (scripts/build.ts swaps it in), which holds
 * the package's JS and loads only its addon from `node_modules`. Required, not imported: a
 * CommonJS package imported as ESM is scanned for named exports first.
 */
export function requireBinding(): Binding {
  return createRequire(import.meta.url)('better-sqlite3') as Binding;
}
