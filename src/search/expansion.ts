import type { SubSearch } from './types.js';

/**
 * Which lines of a query expansion are searched. A small model drifts: the peer keeps a line
 * only if it shares a word with the query (a line about something else finds something
 * else), and so do we. Also dropped: a line that repeats a sub-search already run (the
 * query's own lex and vec) or an earlier line, and those past `room` (the sub-searches left).
 */
export function keptExpansion(
  query: string,
  lines: readonly SubSearch[],
  existing: readonly SubSearch[],
  room: number,
): SubSearch[] {
  const terms = words(query);
  const seen = new Set(existing.map(key));
  const kept: SubSearch[] = [];
  for (const line of lines) {
    if (kept.length >= room) break;
    const text = line.query.trim();
    if (text === '') continue;
    const lower = text.toLowerCase();
    if (terms.length > 0 && !terms.some((term) => lower.includes(term))) continue;
    const k = key({ type: line.type, query: text });
    if (seen.has(k)) continue;
    seen.add(k);
    kept.push({ type: line.type, query: text });
  }
  return kept;
}

/** The query's words (letters and digits, any script), lowercased; one-letter words only when nothing else is left. */
function words(text: string): string[] {
  const all = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  const long = all.filter((word) => word.length > 1);
  return long.length > 0 ? long : all;
}

function key(search: SubSearch): string {
  return `${search.type}\u0000${search.query.trim().toLowerCase()}`;
}
