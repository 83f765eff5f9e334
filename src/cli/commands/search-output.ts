import * as fs from 'node:fs';
import * as path from 'node:path';
import type { QueryResult, SearchHit, SearchOptions, Store } from '../../core/types.js';
import type { Log } from '../../log.js';
import type { CliContext } from '../context.js';
import { formatHits, type SearchExplain, type ShownHit } from '../formats/hits.js';
import { type FormatFlags, outputFormat } from '../formats/output-format.js';
import { showHit } from '../formats/snippet.js';
import { outputStyle } from '../terminal/terminal.js';

/** The flags `search`, `query` and `vsearch` share: ours (`--folder`) and qmd 2.x's. */
export interface SearchFlags extends FormatFlags {
  n?: number;
  collection?: string[];
  folder?: string;
  minScore?: number;
  all?: boolean;
  full?: boolean;
  lineNumbers?: boolean;
  fullPath?: boolean;
  explain?: boolean;
}

/** `qmd query`'s own flags: `--intent`, `--candidate-limit`, `--no-rerank`, `--no-expand` (false when given). */
export interface QueryFlags {
  intent?: string;
  candidateLimit?: number;
  rerank?: boolean;
  expand?: boolean;
}

/** `--all`: every match, up to the store's bound on one answer (`checkLimit`). */
const ALL = 1000;

/**
 * What the store is asked: `-n` (default, as in qmd 2.x: 5, or 20 for `--files` and
 * `--json`), `--all`, `-c` (repeated or comma-separated), `--folder`, `--min-score`.
 */
export function searchOptions(flags: SearchFlags): SearchOptions {
  const format = outputFormat(flags);
  const fallback = format === 'files' || format === 'json' ? 20 : 5;
  return {
    limit: flags.all ? ALL : (flags.n ?? fallback),
    ...(flags.collection !== undefined && { collections: flags.collection }),
    ...(flags.folder !== undefined && { folder: flags.folder }),
    ...(flags.minScore !== undefined && { minScore: flags.minScore }),
  };
}

/** How a search ran, for `--explain` and the terminal's note: a `QueryResult` or BM25's own. */
export interface SearchRun {
  mode: QueryResult['mode'];
  note?: string | undefined;
  searches: QueryResult['searches'];
  /** `query` only: whether the reranker ordered the results, and why a model did not run. */
  reranked?: boolean;
  rerankNote?: string | undefined;
  expansionNote?: string | undefined;
}

/**
 * Prints hits in the asked format. On the terminal format, why a query ran as it did
 * (`(bm25: nothing is embedded yet: BM25 only (run qmd embed))`) goes to stderr; qmd 2.x's
 * machine formats have no place for it (a fallback that is a problem, a missing model, has
 * its own warning), and `--explain` puts it on every result.
 */
export function printHits(
  ctx: CliContext,
  store: Store,
  hits: SearchHit[],
  flags: SearchFlags,
  run: SearchRun,
  warned: readonly string[] = [],
): void {
  const format = outputFormat(flags);
  const notes = [run.note, run.expansionNote, run.rerankNote]
    .filter((n) => n !== undefined)
    .map((note) => unsaid(note, warned));
  if (notes.length > 0 && format === 'cli') ctx.log.line(`(${howItRan(run)}: ${notes.join('; ')})`);
  const shown = hits.map((hit) => showHit(hit, store.get(hit.file).text));
  if (flags.fullPath) showOnDisk(ctx, store, shown);
  const text = formatHits(shown, format, {
    full: flags.full ?? false,
    lineNumbers: flags.lineNumbers ?? false,
    ...(format === 'cli' && { style: outputStyle(process.stdout, ctx.env), query: run.searches[0]?.query ?? '' }),
    ...(flags.explain && { explain: explainOf(run) }),
  });
  if (text !== '') ctx.out(text);
}

/**
 * A log that remembers the warnings written through it: the store warns once about a model it
 * cannot use (`…; searching with BM25 only`) and puts the same words in its note, which the
 * terminal format prints too; `unsaid` keeps the note to what the warning did not say.
 */
export function warningsHeard(log: Log): { log: Log; warned: string[] } {
  const warned: string[] = [];
  return {
    warned,
    log: {
      line: (text) => log.line(text),
      warn: (text) => {
        warned.push(text);
        log.warn(text);
      },
    },
  };
}

/** `note` less a parenthesised detail that a warning already printed. */
function unsaid(note: string, warned: readonly string[]): string {
  let kept = note;
  for (const warning of warned) {
    const detail = warning.replace(/; (searching with BM25 only|answering without it)$/, '');
    kept = kept.replace(` (${detail})`, '');
  }
  return kept;
}

/** `hybrid`, or `hybrid, reranked` when the reranker ordered the results. */
function howItRan(run: SearchRun): string {
  return `${run.mode}${run.reranked ? ', reranked' : ''}`;
}

/** `--explain`: the mode, why, and each sub-search with how it ran and how many it ranked. */
function explainOf(run: SearchRun): SearchExplain {
  return {
    mode: run.mode,
    ...(run.note !== undefined && { note: run.note }),
    ...(run.reranked !== undefined && { reranked: run.reranked }),
    ...(run.rerankNote !== undefined && { rerankNote: run.rerankNote }),
    ...(run.expansionNote !== undefined && { expansionNote: run.expansionNote }),
    searches: run.searches.map(({ type, query, ran, candidates }) => ({ type, query, ran, candidates })),
  };
}

/**
 * `--full-path`: each hit as its file on disk, `./…` under the current folder, else absolute.
 * A file gone since it was indexed keeps its `qmd://` URI and docid, and one line on stderr
 * says how many (qmd 2.x's rule).
 */
function showOnDisk(ctx: CliContext, store: Store, shown: ShownHit[]): void {
  const roots = new Map(store.listCollections().map((c) => [c.name, c.root]));
  let gone = 0;
  for (const s of shown) {
    const root = roots.get(s.hit.collection);
    const file = root === undefined ? undefined : path.join(root, s.hit.path);
    if (file === undefined || !fs.existsSync(file)) {
      gone++;
      continue;
    }
    const relative = path.relative(process.cwd(), file);
    s.onDisk = relative.startsWith('..') || path.isAbsolute(relative) ? file : `./${relative}`;
  }
  if (gone > 0)
    ctx.log.line(`qmd: ${gone} result${gone === 1 ? '' : 's'} no longer on disk, shown as qmd:// (run qmd update)`);
}
