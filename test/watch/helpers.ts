import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import type { Reader } from '../../src/core/reader-types.js';
import type { Log } from '../../src/log.js';
import { watchIndex } from '../../src/watch/index.js';
import type { IndexedChange, IndexWatcher, WatchOptions } from '../../src/watch/types.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

/** A log that keeps its lines, for what a person would read on stderr. */
export function linesLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  return { lines, line: (text) => lines.push(text), warn: (text) => lines.push(`QMD Warning: ${text}`) };
}

export interface Served {
  box: Sandbox;
  root: string;
  reader: Reader;
  log: ReturnType<typeof linesLog>;
  watcher: IndexWatcher;
  changes: IndexedChange[];
  /** Writes (or rewrites) a note under the collection's folder. */
  write(relative: string, text: string): void;
  /** The collection's indexed paths, sorted. */
  indexed(): string[];
  close(): Promise<void>;
}

/**
 * An index with one collection `notes` (added by a real `collection add`), served as `qmd mcp`
 * serves it (a read-only reader), and a watcher over that reader, not yet started.
 */
export async function served(
  files: Record<string, string>,
  options: Partial<WatchOptions> & { mask?: string; ignore?: string[]; indexIn?: 'notes' } = {},
): Promise<Served> {
  const box = sandbox();
  const root = box.notes('notes', files);
  const index = options.indexIn === 'notes' ? path.join(root, 'index.sqlite') : box.index;
  const store = openStore(index);
  await store.addCollection(root, {
    name: 'notes',
    ...(options.mask !== undefined && { mask: options.mask }),
    ...(options.ignore !== undefined && { ignore: options.ignore }),
  });
  await store.close();
  const reader = openReader(index, { readonly: true, quickCheck: 'small' });
  const log = linesLog();
  const watcher = watchIndex(reader, { log, embed: false, ...options });
  const changes: IndexedChange[] = [];
  watcher.onIndexed((change) => changes.push(change));
  return {
    box,
    root,
    reader,
    log,
    watcher,
    changes,
    write(relative, text) {
      fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
      fs.writeFileSync(path.join(root, relative), text);
    },
    indexed: () =>
      reader
        .listDocuments('notes')
        .map((d) => d.path)
        .sort(),
    async close() {
      await watcher.close();
      await reader.close();
      box.cleanup();
    },
  };
}

/**
 * Resolves once `check()` holds, looked at now, after each committed batch and after each
 * write settles (a batch that changed nothing tells no `onIndexed`); rejects after
 * `ms` (a bound for a watcher that never gets there, not a pause) naming `what`.
 */
export function untilIndexed(watcher: IndexWatcher, check: () => boolean, what: string, ms = 20_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (check()) return resolve();
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`not within ${ms} ms: ${what}; report ${JSON.stringify(watcher.report())}`));
    }, ms);
    const look = (): void => {
      if (!check()) return;
      clearTimeout(timer);
      stop();
      resolve();
    };
    const offIndexed = watcher.onIndexed(look);
    const offWrite = watcher.onWrite((event) => {
      if (event === 'settled') look();
    });
    const stop = (): void => {
      offIndexed();
      offWrite();
    };
  });
}
