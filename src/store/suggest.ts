/**
 * "Did you mean …" for a reference that names no indexed document: the closest
 * indexed files, by edit distance on the whole `collection/path`, on the path without its
 * collection, and on the file name alone (so `metting.md` finds `2024/meeting.md`). Case is
 * ignored, so `README.md` finds `readme.md`. Only indexed files are ever suggested.
 */

/** At most this many suggestions: enough to recover from a typo, short enough for one line. */
export const MAX_SUGGESTIONS = 3;

export function closestFiles(wanted: string, files: readonly string[], limit = MAX_SUGGESTIONS): string[] {
  const target = wanted.toLowerCase();
  const targetName = fileName(target);
  // A miss by a third of the file's name is still a typo; more is another file. Measured on
  // the name without its extension, so a shared `notes/` or `.md` buys no slack, and a
  // one-letter name has none: `d.md` is not a typo of `a.md`.
  const stem = targetName.replace(/\.[^.]*$/, '').length;
  const budget = stem < 2 ? 0 : Math.max(1, Math.floor(stem / 3));
  const scored: Array<{ file: string; score: number }> = [];
  for (const file of files) {
    const lower = file.toLowerCase();
    const relative = lower.slice(lower.indexOf('/') + 1);
    const path = Math.min(distance(target, lower, budget), distance(target, relative, budget));
    const name = distance(targetName, fileName(lower), budget);
    // A near match on the whole path ranks above one on the file name alone.
    if (path <= budget || name <= budget) scored.push({ file, score: Math.min(path, name + 1) });
  }
  scored.sort((a, b) => a.score - b.score || a.file.length - b.file.length || (a.file < b.file ? -1 : 1));
  return scored.slice(0, limit).map((entry) => entry.file);
}

function fileName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Levenshtein distance, or `budget + 1` as soon as it must exceed `budget`: a miss scans
 * every indexed path, so most comparisons stop after a row or two.
 */
export function distance(a: string, b: string, budget: number): number {
  if (Math.abs(a.length - b.length) > budget) return budget + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      current.push(value);
      if (value < best) best = value;
    }
    if (best > budget) return budget + 1;
    previous = current;
  }
  return Math.min(previous[b.length] as number, budget + 1);
}
