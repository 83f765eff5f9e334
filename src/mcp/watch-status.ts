import * as z from 'zod';
import type { QueryResult } from '../core/reader-types.js';
import type { WatchStatus } from './deps.js';

/**
 * The watching of the index as the `status` tool and `qmd status` give it (docs/design.md §6):
 * who writes the index as notes change, what is heard by OS events and what is polled (and
 * why), what is pending, and when the last change was seen.
 */
export const watchShape = z
  .object({
    role: z
      .enum(['writer', 'reader', 'off'])
      .describe(
        'writer: this server writes the index as notes change; reader: another process of this index does (writerPid) and this one takes over if it goes; off: nothing here watches (off says why)',
      ),
    writerPid: z.number().int().optional(),
    off: z.string().optional().describe('why nothing watches: --no-watch, QMD_WATCH=0, no index yet, …'),
    collections: z.array(
      z.object({
        collection: z.string(),
        root: z.string(),
        via: z.enum(['events', 'polling']).describe('how changes are heard'),
        reason: z.string().optional().describe('why the folder is polled'),
        folders: z.number().int().describe('folders under OS watch'),
        intervalMs: z.number().int().optional(),
      }),
    ),
    pending: z.number().int().describe('paths seen changed and not in the index yet'),
    vectorsPending: z.number().int().describe('notes whose new text is indexed and whose vectors are not yet'),
    lastChangeAt: z.string().nullable().describe('ISO time the last change was seen'),
    lastIndexedAt: z.string().nullable().describe('ISO time the last batch was committed'),
  })
  .describe('How the index is kept fresh while the server runs');

export type WatchStructured = z.infer<typeof watchShape>;

/** Field by field, times as ISO strings: a report with more than this contract still validates. */
export function pickWatch(w: WatchStatus): WatchStructured {
  return {
    role: w.role,
    ...(w.writerPid !== undefined && { writerPid: w.writerPid }),
    ...(w.off !== undefined && { off: w.off }),
    collections: w.collections.map((c) => ({
      collection: c.collection,
      root: c.root,
      via: c.via,
      ...(c.reason !== undefined && { reason: c.reason }),
      folders: c.folders,
      ...(c.intervalMs !== undefined && { intervalMs: c.intervalMs }),
    })),
    pending: w.pending,
    vectorsPending: w.vectorsPending,
    lastChangeAt: iso(w.lastChangeAt),
    lastIndexedAt: iso(w.lastIndexedAt),
  };
}

/**
 * `Watching: this server writes the index as notes change`, one line per collection
 * (`  notes: OS events on 12 folders`, `  archive: polled every 5 s (no events on nfs)`), then
 * `  pending: 0 paths, vectors pending: 3 notes; last change seen 12 s ago, indexed 11 s ago`.
 */
export function formatWatch(w: WatchStatus, options: { who?: string; now?: number } = {}): string {
  const who = options.who ?? 'this server';
  const now = options.now ?? Date.now();
  if (w.role === 'off') return `Watching: off in ${who} (${w.off ?? 'turned off'})`;
  const lines = [
    w.role === 'writer'
      ? `Watching: ${who} writes the index as notes change`
      : `Watching: pid ${w.writerPid ?? '?'} writes the index as notes change (${who} reads; it takes over if that one goes)`,
  ];
  for (const c of w.collections) {
    const how =
      c.via === 'events'
        ? `OS events on ${c.folders} folder${c.folders === 1 ? '' : 's'}`
        : `polled${c.intervalMs === undefined ? '' : ` every ${seconds(c.intervalMs)}`}${c.reason === undefined ? '' : ` (${c.reason})`}`;
    lines.push(`  ${c.collection}: ${how}`);
  }
  lines.push(
    `  pending: ${w.pending} path${w.pending === 1 ? '' : 's'}, vectors pending: ${w.vectorsPending} note${w.vectorsPending === 1 ? '' : 's'}; ` +
      `last change seen ${ago(w.lastChangeAt, now)}, indexed ${ago(w.lastIndexedAt, now)}`,
  );
  return lines.join('\n');
}

/**
 * The note a search carries while vectors lag the text: `vectors are catching up: 12 notes
 * changed since they were embedded` (their words still match; their meaning is from before).
 */
export function catchingUpNote(vectorsPending: number): string | undefined {
  if (vectorsPending <= 0) return undefined;
  return `vectors are catching up: ${vectorsPending} note${vectorsPending === 1 ? '' : 's'} changed since ${vectorsPending === 1 ? 'it was' : 'they were'} embedded`;
}

/**
 * While the watcher re-embeds changed notes, a search that used vectors says so in its note:
 * their words are searched as they are now, their meaning as it was (docs/design.md §6). A
 * BM25-only answer used no vectors: nothing to say.
 */
export function withCatchingUp(result: QueryResult, vectorsPending: number): QueryResult {
  const catching = result.mode === 'bm25' ? undefined : catchingUpNote(vectorsPending);
  if (catching === undefined) return result;
  return { ...result, note: result.note === undefined ? catching : `${result.note}; ${catching}` };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function ago(ms: number | null, now: number): string {
  if (ms === null) return 'never';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : new Date(ms).toISOString();
}
