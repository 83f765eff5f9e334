import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';

/**
 * The hash a note's content is indexed under (`documents.hash`, `content.hash`): the SHA-256,
 * in lower-case hex, of the note's text as qmd 2.x reads it (`readFileSync(file, 'utf-8')`,
 * byte-order mark kept) and hashes it (UTF-8 again). For a file that is valid UTF-8 that is the
 * SHA-256 of its bytes, computed on the bytes; for one that is not, of its text with each invalid
 * sequence read as U+FFFD, as qmd 2.x has it. So qmd 2.x's docid (the first 6 hex digits of this
 * hash) names the same note in this index, and the stored text can be checked against it
 * (`textMatchesHash`) whatever the file held.
 */
export function contentHash(bytes: Buffer): string {
  const hashed = isUtf8(bytes) ? bytes : Buffer.from(bytes.toString('utf8'), 'utf8');
  return createHash('sha256').update(hashed).digest('hex');
}

/** `contentHash` of a text already decoded. */
export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Whether `text`, as stored (a leading byte-order mark is dropped when a note is read), is the
 * text `hash` was taken of: one SHA-256 of the text, two for a note that began with a mark.
 */
export function textMatchesHash(text: string, hash: string): boolean {
  return textHash(text) === hash || textHash(`\uFEFF${text}`) === hash;
}
