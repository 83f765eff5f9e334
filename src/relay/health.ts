import { readFileSync, unlinkSync } from 'node:fs';
import { errorMessage, isQmdError } from '../errors.js';
import { replacePrivateFile } from '../private-file.js';
import type { SharedPaths } from './paths.js';

/**
 * Two small files beside the shared server's socket (0600, like everything there) that say why
 * a server cannot serve, for the processes that would otherwise wait on it:
 *
 * - `mcp-<hash>.failed`: written by a server that could not start (the store would not open: a
 *   damaged index, a build for another Node), before it exits. A relay waiting for that server
 *   reads it and fails its client with the reason, instead of waiting out its connect bound.
 *   Only a failure written after the relay began waiting counts: each relay gets a fresh try.
 *   A server that starts serving removes it.
 * - `mcp-<hash>.hung`: written by a relay whose connection was accepted but never greeted
 *   within its connect bound (the server is stopped, or something that never answers holds the
 *   socket). `qmd status` reads it to say the server is hung. A server that greets a relay
 *   again, starts, or exits removes it.
 */
export interface StartFailure {
  /** The server that failed. */
  pid: number;
  /** When, in ms since the epoch. */
  at: number;
  /** One line: what the server would print on its stderr. */
  error: string;
  /** The error's code when it is one a user can act on (`INDEX_CORRUPT`, …): relays pass it on in `data`. */
  code?: string;
}

export interface HungMarker {
  /** The server's pid from its record, if there was one to read. */
  pid: number | null;
  /** When a relay gave up waiting on it (ISO 8601). */
  since: string;
  /** How long that relay waited (its `QMD_SHARED_CONNECT_MS`). */
  waitedMs: number;
  /** The relay that noticed. */
  relay: number;
}

export function failurePath(paths: SharedPaths): string {
  return `${paths.record.replace(/\.json$/, '')}.failed`;
}

export function hungPath(paths: SharedPaths): string {
  return `${paths.record.replace(/\.json$/, '')}.hung`;
}

export function writeStartFailure(paths: SharedPaths, failure: StartFailure): void {
  writeWhole(failurePath(paths), failure);
}

/** This process could not start because of `error`: one line, as its stderr says it. */
export function startFailure(error: unknown): StartFailure {
  const line = errorMessage(error)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  if (isQmdError(error)) return { pid: process.pid, at: Date.now(), error: line, code: error.code };
  return { pid: process.pid, at: Date.now(), error: `internal error: ${line}` };
}

/** The failure of a server that failed at or after `since` (ms since the epoch), else `null`. */
export function readStartFailure(paths: SharedPaths, since: number): StartFailure | null {
  const failure = readJson(failurePath(paths)) as Partial<StartFailure> | null;
  if (failure === null || typeof failure.error !== 'string' || typeof failure.at !== 'number') return null;
  return failure.at >= since ? (failure as StartFailure) : null;
}

export function markHung(paths: SharedPaths, waitedMs: number): HungMarker {
  const record = readJson(paths.record) as { pid?: unknown } | null;
  const marker: HungMarker = {
    pid: typeof record?.pid === 'number' ? record.pid : null,
    since: new Date().toISOString(),
    waitedMs,
    relay: process.pid,
  };
  writeWhole(hungPath(paths), marker);
  return marker;
}

/** What a relay last found: the server (by pid) that did not greet it in time, or `null`. */
export function readHung(paths: SharedPaths): HungMarker | null {
  const marker = readJson(hungPath(paths)) as Partial<HungMarker> | null;
  return marker !== null && typeof marker.since === 'string' ? (marker as HungMarker) : null;
}

/** Removes a file of these (a server that serves again clears both). Never throws. */
export function clearHealth(paths: SharedPaths, which: 'failed' | 'hung'): void {
  try {
    unlinkSync(which === 'failed' ? failurePath(paths) : hungPath(paths));
  } catch {
    // Not there: nothing to clear.
  }
}

/** Written aside and renamed into place: a reader never sees half of it. Never throws. */
function writeWhole(path: string, value: object): void {
  try {
    replacePrivateFile(path, `${path}.${process.pid}.tmp`, `${JSON.stringify(value)}\n`);
  } catch {
    // Best effort: a relay that cannot leave its note still serves its client.
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return null;
  }
}
