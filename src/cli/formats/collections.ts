import type { CollectionInfo, ContextInfo, DocumentEntry } from '../../core/types.js';

/**
 * Collections, contexts and `ls` in qmd 2.x's shapes (its `collectionList`, `collection show`,
 * `contextList` and `listFiles`), without its colours. `now` is injected for tests.
 */

/** `Collections (2):`, then per collection its name, URI, pattern, ignores, files and last scan. */
export function formatCollectionList(collections: CollectionInfo[], now = Date.now()): string {
  if (collections.length === 0) return "No collections found. Run 'qmd collection add .' to create one.";
  const blocks = collections.map((c) =>
    [
      `${c.name} (qmd://${c.name}/)${c.includeByDefault ? '' : ' [excluded]'}`,
      `  Pattern:  ${c.mask}`,
      ...(c.ignore.length > 0 ? [`  Ignore:   ${c.ignore.join(', ')}`] : []),
      `  Files:    ${c.documents}`,
      `  Updated:  ${timeAgo(Date.parse(c.updatedAt), now)}`,
      '',
    ].join('\n'),
  );
  return `Collections (${collections.length}):\n\n${blocks.join('\n')}\n`;
}

/** `collection show NAME`: path, pattern, inclusion, update command, how many contexts. */
export function formatCollectionShow(c: CollectionInfo, contexts: number): string {
  return [
    `Collection: ${c.name}`,
    `  Path:     ${c.root}`,
    `  Pattern:  ${c.mask}`,
    ...(c.ignore.length > 0 ? [`  Ignore:   ${c.ignore.join(', ')}`] : []),
    `  Include:  ${c.includeByDefault ? 'yes (default)' : 'no'}`,
    ...(c.update === undefined ? [] : [`  Update:   ${c.update}`]),
    ...(contexts > 0 ? [`  Contexts: ${contexts}`] : []),
  ].join('\n');
}

/** `ls` with no argument: each collection's URI and file count. */
export function formatLsCollections(collections: CollectionInfo[]): string {
  if (collections.length === 0) return "No collections found. Run 'qmd collection add .' to index files.";
  return `Collections:\n\n${collections.map((c) => `  qmd://${c.name}/  (${c.documents} files)`).join('\n')}`;
}

/** `ls NAME[/PATH]`: `size  date  qmd://…`, one line per file, like `ls -l`. */
export function formatLs(entries: DocumentEntry[], where: string, now = Date.now()): string {
  if (entries.length === 0) return `No files found under qmd://${where}`;
  const width = Math.max(...entries.map((e) => formatBytes(e.size).length));
  return entries
    .map((e) => `${formatBytes(e.size).padStart(width)}  ${lsTime(new Date(e.modified), now)}  qmd://${e.file}`)
    .join('\n');
}

/** `context list`: a blank line, `Configured Contexts`, then by collection (`*` for the global one). */
export function formatContextList(contexts: ContextInfo[]): string {
  if (contexts.length === 0) return "No contexts configured. Use 'qmd context add' to add one.";
  const lines = ['', 'Configured Contexts', ''];
  let last: string | undefined;
  for (const c of contexts) {
    const group = c.collection ?? '*';
    if (group !== last) {
      lines.push(group);
      last = group;
    }
    lines.push(c.collection === null ? '  /' : c.prefix === '' ? '  / (root)' : `  ${c.prefix}`);
    lines.push(`    ${c.text}`);
  }
  return lines.join('\n');
}

/** `24s ago`, `5m ago`, `2h ago`, `3d ago`. */
export function timeAgo(then: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ago`;
  return `${Math.floor(hours / 24)}d ago`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Dec  4 15:48`, or `Jun  1  2024` for a file older than six months, as `ls -l` writes them. */
export function lsTime(date: Date, now = Date.now()): string {
  const month = MONTHS[date.getMonth()];
  const day = String(date.getDate()).padStart(2, ' ');
  if (date.getTime() < now - 6 * 30 * 24 * 60 * 60 * 1000) return `${month} ${day}  ${date.getFullYear()}`;
  return `${month} ${day} ${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}
