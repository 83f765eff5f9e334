import type { CollectionInfo, ContextInfo } from '../core/reader-types.js';

/** Enough to orient a model; a store with hundreds of collections is summarised, not dumped. */
const MAX_LISTED_COLLECTIONS = 30;
/** Contexts are listed the same way, each cut to a line: the status tool has them whole. */
const MAX_LISTED_CONTEXTS = 30;
const MAX_CONTEXT_LINE_CHARS = 160;

/**
 * The server's `instructions`, which clients put in the model's system prompt: what is
 * searchable and what the contexts say it is (computed once, when the server is created, from
 * two small tables: no document is read), and the query → get workflow.
 */
export function buildInstructions(collections: CollectionInfo[], contexts: ContextInfo[] = []): string {
  const documents = collections.reduce((sum, c) => sum + c.documents, 0);
  const lines: string[] = [];
  if (collections.length === 0) {
    lines.push('qmd searches local markdown notes, but no collection is indexed yet (`qmd collection add DIR`).');
  } else {
    lines.push(`qmd searches ${documents} local markdown documents in ${collections.length} collection(s):`);
    for (const c of collections.slice(0, MAX_LISTED_COLLECTIONS)) {
      lines.push(`  - "${c.name}" (${c.documents} documents) at ${c.root}`);
    }
    if (collections.length > MAX_LISTED_COLLECTIONS) {
      lines.push(`  - … and ${collections.length - MAX_LISTED_COLLECTIONS} more (the status tool lists them all)`);
    }
  }
  if (contexts.length > 0) {
    lines.push('', 'What the notes are (contexts; each result they cover carries its `context`):');
    for (const c of contexts.slice(0, MAX_LISTED_CONTEXTS)) lines.push(`  - ${c.path}: ${cut(c.text)}`);
    if (contexts.length > MAX_LISTED_CONTEXTS) {
      lines.push(`  - … and ${contexts.length - MAX_LISTED_CONTEXTS} more (the status tool lists them all)`);
    }
  }
  lines.push(
    '',
    'How to use it:',
    '  1. `query` finds documents: ranked results, each with its file (`collection/path.md`), `#docid`, title, score and snippet. Give `query` (plain text) or `searches`, typed sub-searches fused together: `lex` (keywords), `vec` (a question), `hyde` (a passage like the answer). `intent` says what the query is about; narrow with `collections`, `folder` (a folder inside them, like `2024/q1`) and `minScore`.',
    '  2. `get` reads one of them by that file or `#docid`, with numbered lines (`lineNumbers: false` for the raw text); `fromLine`/`maxLines` (or `file.md:LINE`, `file.md:FROM:COUNT`) read a slice of a long one.',
    '  3. `multi_get` reads several by glob (`notes/2025-*.md`, `**/2025-*.md` in every collection) or comma list; a document over `maxBytes` is skipped and listed.',
    '  `status` shows the index, its collections and embeddings. Documents are also resources: `qmd://collection/path.md`.',
    'Only indexed documents can be read. A path without its collection, or its unique end (`meeting.md`), also names one; a miss suggests the closest.',
  );
  return lines.join('\n');
}

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_CONTEXT_LINE_CHARS ? `${flat.slice(0, MAX_CONTEXT_LINE_CHARS - 1)}…` : flat;
}
