/**
 * Document references belong to the store (`src/store/refs.ts` is the one authority on what
 * may be read); the server passes what clients send as it is. Here only the other direction:
 * the URI the server gives out for an indexed document.
 */

/** The resource URI of an indexed document: segments encoded, slashes kept (as the peer does). */
export function documentUri(file: string): string {
  return `qmd://${file.split('/').map(encodeURIComponent).join('/')}`;
}
