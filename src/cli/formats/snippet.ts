import type { SearchHit } from '../../core/types.js';
import type { ShownHit } from './hits.js';

/** Lines shown when a hit has no snippet range of its own (a vector hit without a chunk line). */
const FALLBACK_LINES = 4;

/**
 * A hit as qmd 2.x shows it, from the document's text: its snippet lines under a diff-style
 * header, `@@ -FROM,COUNT @@ (B before, A after)` (B and A: the document's lines not shown),
 * as qmd 2.8.3's `extractSnippet` writes it; the lines are the document's own, so no
 * highlight marks.
 */
export function showHit(hit: SearchHit, text: string): ShownHit {
  const lines = text.split('\n');
  const total = lines.length;
  const range = hit.snippetRange ?? { fromLine: hit.line ?? 1, lines: FALLBACK_LINES };
  const from = Math.min(Math.max(1, range.fromLine), total);
  const count = Math.max(1, Math.min(range.lines, total - from + 1));
  const header = `@@ -${from},${count} @@ (${from - 1} before, ${total - (from - 1 + count)} after)`;
  return { hit, header, lines: lines.slice(from - 1, from - 1 + count).join('\n'), body: text, firstLine: from };
}
