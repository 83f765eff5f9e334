import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { processExists } from '../lifecycle/parent.js';
import type { HostFacts } from '../platform.js';
import { replacePrivateFile } from '../private-file.js';
import { secureDir, servingDir } from './paths.js';

/**
 * Every long-lived qmd process of a user says what it is in one small file in the place
 * (`<place>/procs/<pid>.json`, 0600 in the 0700 place), for `qmd doctor` and for people: its
 * role, its index, its client and when it started. Written once it serves (off the path to
 * its first reply), with the client's name when the client says it (`initialize`), and removed
 * when the process leaves. One SIGKILLed leaves its file: a reader drops a file whose pid is
 * gone (`readProcessRecords`). Information only: nothing decides anything from these files
 * (a server is found and judged by its own socket, never by a record: docs/design.md §6).
 */
export type ProcessRole = 'plain' | 'relay' | 'shared' | 'http' | 'daemon';

export interface ProcessRecord {
  pid: number;
  role: ProcessRole;
  /** The index it serves. */
  index: string;
  /** Its parent when it started: the MCP client for `plain` and `relay`. */
  ppid: number;
  /** What the client said it is (`initialize`'s `clientInfo`); null until then, and for servers. */
  client: { name: string; version: string } | null;
  startedAt: string;
  version: string;
}

export interface RecordedProcess {
  /** The client's name and version, once `initialize` says it. Never throws. */
  setClient(client: { name?: unknown; version?: unknown } | undefined): void;
  /** Removes the file (idempotent). Never throws. */
  remove(): void;
}

/** `<place>/procs`: one file per live qmd process of this user. */
export function processRecordsDir(facts: HostFacts): string {
  return join(servingDir(facts), 'procs');
}

/**
 * Writes this process's record (after `setImmediate`, so that it never delays the first reply)
 * and removes it on `exit` as well as on `remove()`. A place that cannot be written (another
 * user's `/tmp/qmd-<uid>`, a full disk) only means no record.
 */
export function recordProcess(
  facts: HostFacts,
  fields: Omit<ProcessRecord, 'pid' | 'client' | 'startedAt'>,
): RecordedProcess {
  const dir = processRecordsDir(facts);
  const file = join(dir, `${process.pid}.json`);
  const record: ProcessRecord = {
    pid: process.pid,
    ...fields,
    client: null,
    startedAt: new Date().toISOString(),
  };
  let removed = false;
  let writable = false;
  const write = (): void => {
    if (removed || !writable) return;
    try {
      // Never through a link planted in the folder (src/private-file.ts).
      replacePrivateFile(file, `${file}.tmp`, `${JSON.stringify(record)}\n`);
    } catch {
      // Information only.
    }
  };
  const onExit = (): void => remove();
  const remove = (): void => {
    if (removed) return;
    removed = true;
    process.off('exit', onExit);
    try {
      unlinkSync(file);
    } catch {
      // Never written, or gone.
    }
  };
  process.on('exit', onExit);
  setImmediate(() => {
    if (removed) return;
    try {
      if (secureDir(servingDir(facts)) !== null) return;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writable = secureDir(dir) === null;
    } catch {
      return;
    }
    write();
  });
  return {
    setClient(client) {
      if (client === undefined || typeof client.name !== 'string') return;
      record.client = { name: client.name, version: typeof client.version === 'string' ? client.version : '' };
      write();
    },
    remove,
  };
}

/**
 * The records of this user's live qmd processes, oldest first. A record whose pid no longer
 * exists is removed (a pid the system has given to another process keeps its record until that
 * one ends: these files are information, and say when they were written).
 */
export function readProcessRecords(facts: HostFacts): ProcessRecord[] {
  const dir = processRecordsDir(facts);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const records: ProcessRecord[] = [];
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const file = join(dir, name);
    let record: ProcessRecord;
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as ProcessRecord;
    } catch {
      continue;
    }
    if (!Number.isSafeInteger(record.pid) || !processExists(record.pid)) {
      try {
        unlinkSync(file);
      } catch {
        // Gone meanwhile.
      }
      continue;
    }
    records.push(record);
  }
  return records.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
