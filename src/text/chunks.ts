import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { extractTitle, lineStarts } from './markdown.js';

/**
 * Markdown → chunks for embedding. A chunk is a span `[start, end)` of a note's
 * text; what is embedded is that span in the model's document prompt (`PromptFormat`).
 *
 * Sizes are in UTF-8 bytes, from the model's own limit: every tokenizer llama.cpp runs here
 * (SentencePiece with byte fallback, byte-level BPE) turns a byte into at most one token, so
 * a text of B bytes has at most B + 1 tokens (the +1 is SentencePiece's leading `▁`). A chunk
 * whose prompt fits in `maxTokens` bytes can never be truncated by the embedder.
 * - budget = min(MAX_CHUNK_BYTES, maxTokens − TOKEN_MARGIN − bytes of the prompt's prefix);
 *   the default model (context capped at 2048 by the embedder) gets 1,800 bytes ≈ 450
 *   English tokens, close to the 512-token chunks retrieval models are usually tuned on;
 *   the tiny test model (context 512, ~1.2 bytes per token) gets ~500 bytes.
 * - A chunk ends at the best break inside its last `1 − MIN_FILL` of budget: a heading, else
 *   a paragraph break, else a line end, else a sentence end, else a space; hard cut last.
 *   Small sections therefore share a chunk, and a heading starts a new one when it can.
 * - Consecutive chunks of one section overlap by OVERLAP (15%) of the budget, moved to a
 *   line or word start, so a sentence cut at a boundary is whole in one of them. No
 *   overlap after a heading break: the next section does not need the last one's tail.
 */
export const MAX_CHUNK_BYTES = 1800;
export const OVERLAP = 0.15;
export const MIN_FILL = 0.4;
/** Room for BOS/EOS and the tokenizer's leading space piece. */
export const TOKEN_MARGIN = 8;
/** Smallest budget we chunk to (a model with a context this small is not an embedding model). */
const MIN_BUDGET = 64;
/** Bumped when the algorithm changes: chunks made by another version are rebuilt. */
const VERSION = 1;

export interface ChunkSpan {
  seq: number;
  start: number;
  end: number;
  /** 1-based line where the chunk starts. */
  line: number;
}

export interface Chunk extends ChunkSpan {
  /** sha256 of `text`: embeddings are keyed by it (and the model fingerprint). */
  hash: string;
  /** What is embedded. */
  text: string;
}

/**
 * How a model wants its inputs. EmbeddingGemma (the default) was trained with task prompts:
 * `task: search result | query: …` for queries and `title: … | text: …` for documents (its
 * model card); without them its retrieval quality drops. Other models get the raw text. The
 * family is recognised by the model's file name or URI, which keeps it known without
 * loading the model.
 */
export interface PromptFormat {
  name: 'embeddinggemma' | 'plain';
  document(title: string, text: string): string;
  query(text: string): string;
}

const gemma: PromptFormat = {
  name: 'embeddinggemma',
  document: (title, text) => `title: ${title} | text: ${text}`,
  query: (text) => `task: search result | query: ${text}`,
};

const plain: PromptFormat = { name: 'plain', document: (_title, text) => text, query: (text) => text };

export function promptFormat(modelSpec: string): PromptFormat {
  return /embeddinggemma/i.test(basename(modelSpec)) ? gemma : plain;
}

/** Identifies the chunking of an index: chunks made under another id are rebuilt. */
export function chunkerId(maxTokens: number, format: PromptFormat): string {
  return `md${VERSION}:max${MAX_CHUNK_BYTES}:tokens${maxTokens}:${format.name}`;
}

/** The title in the document prompt: the note's first heading, else `none` (the model card's word). */
export function chunkTitle(body: string): string {
  return extractTitle(body, '') || 'none';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The chunks of a note, with the text to embed and its hash. Whitespace-only spans are dropped. */
export function chunkNote(body: string, maxTokens: number, format: PromptFormat): Chunk[] {
  const title = chunkTitle(body);
  const budget = Math.max(
    MIN_BUDGET,
    Math.min(MAX_CHUNK_BYTES, maxTokens - TOKEN_MARGIN - Buffer.byteLength(format.document(title, ''))),
  );
  return splitMarkdown(body, budget).map((span) => {
    const text = format.document(title, body.slice(span.start, span.end));
    return { ...span, text, hash: sha256(text) };
  });
}

type LineKind = 'heading' | 'paragraph' | 'line';

interface Break {
  at: number;
  kind: LineKind;
}

const atxHeading = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const fence = /^ {0,3}(```|~~~)/;

/** Line starts where a chunk may break, with how good a break each is (fences are only lines). */
function lineBreaks(text: string): Break[] {
  const breaks: Break[] = [];
  const starts = lineStarts(text);
  let inFence: string | undefined;
  let previousBlank = false;
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i] as number;
    const end = i + 1 < starts.length ? (starts[i + 1] as number) - 1 : text.length;
    const line = text.slice(start, end);
    const fenced = fence.exec(line)?.[1];
    let kind: LineKind = 'line';
    if (inFence === undefined && atxHeading.test(line)) kind = 'heading';
    else if (inFence === undefined && previousBlank) kind = 'paragraph';
    if (fenced !== undefined) {
      if (inFence === undefined) inFence = fenced;
      else if (fenced === inFence) inFence = undefined;
    }
    previousBlank = line.trim() === '';
    if (start > 0) breaks.push({ at: start, kind });
  }
  return breaks;
}

/** Spans of at most `budget` UTF-8 bytes covering `text`, cut at the best breaks (see above). */
export function splitMarkdown(text: string, budget: number): ChunkSpan[] {
  const breaks = lineBreaks(text);
  const starts = lineStarts(text);
  const spans: ChunkSpan[] = [];
  const push = (start: number, end: number): void => {
    if (text.slice(start, end).trim() === '') return;
    spans.push({ seq: spans.length, start, end, line: lineOf(starts, start) });
  };
  const overlap = Math.floor(budget * OVERLAP);
  let start = 0;
  while (start < text.length) {
    const limit = advanceBytes(text, start, budget);
    if (limit >= text.length) {
      push(start, text.length);
      break;
    }
    const earliest = advanceBytes(text, start, Math.ceil(budget * MIN_FILL));
    const cut = bestBreak(text, breaks, earliest, limit);
    push(start, cut.at);
    let next = cut.at;
    if (cut.kind !== 'heading') {
      const from = Math.max(advanceBytes(text, start, overlap + 1), cut.at - overlap);
      next = Math.min(cut.at, wordStart(text, from, cut.at));
    }
    start = next > start ? next : cut.at;
  }
  return spans;
}

/** The last break in `(earliest, limit]` of the best kind present; else a sentence end, a space, or `limit`. */
function bestBreak(text: string, breaks: Break[], earliest: number, limit: number): { at: number; kind: string } {
  // Breaks are sorted: start from the last one at or before `limit` (a long note has many).
  let last = -1;
  for (let low = 0, high = breaks.length - 1; low <= high; ) {
    const mid = (low + high) >>> 1;
    if ((breaks[mid] as Break).at <= limit) {
      last = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  for (const kind of ['heading', 'paragraph', 'line'] as const) {
    for (let i = last; i >= 0; i--) {
      const candidate = breaks[i] as Break;
      if (candidate.at <= earliest) break;
      if (kind === 'line' || candidate.kind === kind) return { at: candidate.at, kind };
    }
  }
  const window = text.slice(earliest, limit);
  const sentence = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
  if (sentence > 0) return { at: earliest + sentence + 2, kind: 'sentence' };
  const space = window.search(/\s\S*$/);
  if (space > 0) return { at: earliest + space + 1, kind: 'space' };
  return { at: limit, kind: 'hard' };
}

/** The first line start in `[from, before)`, else the first word start there, else `from`. */
function wordStart(text: string, from: number, before: number): number {
  const newline = text.indexOf('\n', from > 0 ? from - 1 : 0);
  if (newline !== -1 && newline + 1 >= from && newline + 1 < before) return newline + 1;
  for (let i = Math.max(from, 1); i < before; i++) {
    if (/\s/.test(text[i - 1] as string) && !/\s/.test(text[i] as string)) return i;
  }
  return from;
}

/**
 * The largest `end` ≤ text.length with `text.slice(from, end)` at most `bytes` UTF-8 bytes,
 * never inside a surrogate pair (and at least one code point past `from`).
 */
export function advanceBytes(text: string, from: number, bytes: number): number {
  let used = 0;
  let i = from;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > bytes) break;
    used += size;
    i += pair ? 2 : 1;
  }
  if (i > from || from >= text.length) return i;
  // A budget below one character still advances, by one whole code point.
  return from + ((text.codePointAt(from) as number) > 0xffff ? 2 : 1);
}

function lineOf(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if ((starts[mid] as number) <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}
