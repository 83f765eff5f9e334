import type { SearchHit } from '../../core/types.js';
import { fitWidth, type OutputStyle, type Paint, PLAIN_OUTPUT } from '../terminal/terminal.js';
import { csvField, numberLines, type OutputFormat, qmdUri, xmlEscape } from './output-format.js';

/** A hit with what its format needs from the document: the snippet's lines, or all of them. */
export interface ShownHit {
  hit: SearchHit;
  /** The snippet's header as qmd 2.x writes it: `@@ -FROM,COUNT @@ (B before, A after)`. */
  header: string;
  /** The snippet's lines, as in the document. */
  lines: string;
  /** The whole document (`--full`). */
  body?: string;
  /** The document's line number of the first of `lines`, for `--line-numbers`. */
  firstLine: number;
  /**
   * `--full-path`: the file on disk (`./…` under the current folder, else absolute), shown in
   * place of the `qmd://` URI and the docid, as qmd 2.x does.
   */
  onDisk?: string;
}

export interface HitOptions {
  full?: boolean;
  lineNumbers?: boolean;
  /**
   * The terminal format on a terminal (`outputStyle`): coloured as qmd 2.x colours it (path cyan,
   * docid dim, title bold, score green, yellow or dim by strength), the query's words marked in
   * `style.highlight`, snippet and context lines cut to the width. Default: plain, whole lines.
   */
  style?: OutputStyle;
  /** The words to mark in a terminal's snippets. */
  query?: string;
  /** `--explain`: how the search ran, on each result (JSON `explain`, a terminal `Explain:` line). */
  explain?: SearchExplain;
}

/**
 * What `--explain` says here: the mode that answered, why when it fell back, and each
 * sub-search (typed as qmd 2.x's `lex`/`vec`/`hyde`) with how it ran and how many documents it
 * ranked. qmd 2.x's per-document RRF contributions are not given (docs/peer-cli.md).
 */
export interface SearchExplain {
  mode: string;
  note?: string;
  /** `query`: whether the reranker ordered the results, and why the reranker or the expansion did not run. */
  reranked?: boolean;
  rerankNote?: string;
  expansionNote?: string;
  searches: Array<{ type: string; query: string; ran: string; candidates: number }>;
}

/**
 * Search results in qmd 2.x's six formats (its `outputResults`), field for field: `file` is
 * the `qmd://` URI, scores are ours (relative to the best, `scores.ts`). Empty results as
 * qmd 2.x prints them: `[]`, the CSV header, `<results></results>`, nothing for md and files,
 * `No results found.` for the terminal.
 */
export function formatHits(shown: ShownHit[], format: OutputFormat, options: HitOptions = {}): string {
  if (shown.length === 0) return emptyResults(format);
  const name = (s: ShownHit): string => s.onDisk ?? qmdUri(s.hit.file);
  // A snippet is its header, a blank line and its lines; numbered, the lines carry the
  // document's own line numbers (qmd 2.8.3 numbers the header too, from the match's line).
  const content = (s: ShownHit, numbered: boolean): string => {
    if (options.full && s.body !== undefined) return numbered ? numberLines(s.body, 1) : s.body;
    return `${s.header}\n\n${numbered ? numberLines(s.lines, s.firstLine) : s.lines}`;
  };
  switch (format) {
    case 'json':
      return JSON.stringify(
        shown.map((s) => ({
          ...(s.onDisk === undefined && { docid: s.hit.docid }),
          score: Math.round(s.hit.score * 100) / 100,
          file: name(s),
          ...(s.hit.line !== undefined && { line: s.hit.line }),
          title: s.hit.title,
          ...(s.hit.context !== undefined && { context: s.hit.context }),
          ...(options.full ? { body: content(s, options.lineNumbers ?? false) } : {}),
          ...(!options.full ? { snippet: content(s, options.lineNumbers ?? false) } : {}),
          ...(options.explain !== undefined && { explain: options.explain }),
        })),
        null,
        2,
      );
    case 'files':
      return shown
        .map((s) => {
          const context = s.hit.context === undefined ? '' : `,"${s.hit.context.replace(/"/g, '""')}"`;
          const id = s.onDisk === undefined ? `${s.hit.docid},` : '';
          return `${id}${s.hit.score.toFixed(2)},${name(s)}${context}`;
        })
        .join('\n');
    case 'csv':
      return [
        'docid,score,file,title,context,line,snippet',
        ...shown.map((s) =>
          [
            s.onDisk === undefined ? s.hit.docid : '',
            s.hit.score.toFixed(4),
            csvField(name(s)),
            csvField(s.hit.title),
            csvField(s.hit.context ?? ''),
            s.hit.line ?? '',
            csvField(content(s, options.lineNumbers ?? false)),
          ].join(','),
        ),
      ].join('\n');
    case 'md':
      return shown
        .map((s) => {
          const context = s.hit.context === undefined ? '' : `**context:** ${s.hit.context}\n`;
          const docid = s.onDisk === undefined ? `**docid:** \`${s.hit.docid}\`\n` : '';
          return `---\n# ${s.hit.title || name(s)}\n**file:** \`${name(s)}\`\n${docid}${context}\n${content(s, options.lineNumbers ?? false)}\n`;
        })
        .join('\n');
    case 'xml':
      return shown
        .map((s) => {
          const title = s.hit.title ? ` title="${xmlEscape(s.hit.title)}"` : '';
          const context = s.hit.context === undefined ? '' : ` context="${xmlEscape(s.hit.context)}"`;
          const docid = s.onDisk === undefined ? ` docid="${s.hit.docid}"` : '';
          return `<file${docid} name="${xmlEscape(name(s))}"${title}${context}>\n${xmlEscape(content(s, options.lineNumbers ?? false))}\n</file>\n`;
        })
        .join('\n');
    case 'cli': {
      const { paint, width, highlight } = options.style ?? PLAIN_OUTPUT;
      const cut = (line: string) => (width === undefined ? line : fitWidth(line, width - 1));
      const mark =
        highlight !== undefined && options.query !== undefined ? marker(options.query, highlight) : undefined;
      return shown
        .map((s) => {
          const line = s.hit.line === undefined ? '' : paint.dim(`:${s.hit.line}`);
          const lines = [`${paint.cyan(name(s))}${line}${s.onDisk === undefined ? ` ${paint.dim(s.hit.docid)}` : ''}`];
          if (s.hit.title) lines.push(paint.bold(`Title: ${s.hit.title}`));
          if (s.hit.context !== undefined)
            lines.push(...`Context: ${s.hit.context}`.split('\n').map((l) => cut(paint.dim(l))));
          lines.push(`Score: ${scorePaint(paint, s.hit.score)(`${(s.hit.score * 100).toFixed(0).padStart(3)}%`)}`);
          if (options.explain !== undefined) lines.push(cut(paint.dim(explainLine(options.explain))));
          const body = content(s, options.lineNumbers ?? false)
            .split('\n')
            .map((l) => cut(mark === undefined ? l : mark(l)));
          lines.push('', ...body);
          return lines.join('\n');
        })
        .join('\n\n\n');
    }
  }
}

/** qmd 2.x's score colours: green from 70%, yellow from 40%, dim below. */
function scorePaint(paint: Paint, score: number): (text: string) => string {
  if (score >= 0.7) return paint.green;
  if (score >= 0.4) return paint.yellow;
  return paint.dim;
}

/** Marks each word of the query (two characters or more, and what it begins) where it appears. */
function marker(query: string, marks: { open: string; close: string }): (line: string) => string {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])];
  if (words.length === 0) return (line) => line;
  // Letters and digits only: nothing in a word needs escaping.
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.join('|')})[\\p{L}\\p{N}]*`, 'giu');
  return (line) => line.replace(pattern, (word) => `${marks.open}${word}${marks.close}`);
}

function emptyResults(format: OutputFormat): string {
  switch (format) {
    case 'json':
      return '[]';
    case 'csv':
      return 'docid,score,file,title,context,line,snippet';
    case 'xml':
      return '<results></results>';
    case 'md':
    case 'files':
      return '';
    case 'cli':
      return 'No results found.';
  }
}

/** `Explain: hybrid; lex "wal" bm25 30, vec "wal" vector 30` (and why, when it fell back). */
function explainLine(explain: SearchExplain): string {
  const searches = explain.searches.map((s) => `${s.type} ${JSON.stringify(s.query)} ${s.ran} ${s.candidates}`);
  const notes = [explain.note, explain.expansionNote, explain.rerankNote].filter((n) => n !== undefined);
  const how = `${explain.mode}${explain.reranked ? ', reranked' : ''}`;
  return `Explain: ${how}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}; ${searches.join(', ')}`;
}
