import { MAX_SUB_SEARCHES } from '../core/reader-types.js';

/**
 * Bounds on what a client may send. The SDK checks them (zod) before a handler runs, so an
 * oversized argument becomes an `isError` result naming the argument, never work for the store.
 */

/** A search query: far above a long natural-language question, far below a pasted document. */
export const MAX_QUERY_CHARS = 2_000;
/** A document reference (`collection/path.md`, `#docid`, `qmd://…`): PATH_MAX on Linux. */
export const MAX_REF_CHARS = 4_096;
/** A glob or a comma list of references: room for a few dozen paths. */
export const MAX_PATTERN_CHARS = 16_384;
export const MAX_COLLECTIONS = 64;
/** `query`'s `intent`: a sentence or two of background, not a document. */
export const MAX_INTENT_CHARS = 1_000;
export const MAX_COLLECTION_NAME_CHARS = 256;
/** `multi_get` never returns more text than this in one reply, whatever `maxBytes` asks. */
export const MAX_BYTES_CEILING = 8 * 1024 * 1024;
/**
 * The SDK's own guard (`maxToolInputElements`): counts array elements and object
 * members before zod runs, so a 10⁶-element `collections` array is refused without being
 * parsed element by element. The largest legal payload is `query`'s: `MAX_COLLECTIONS` names,
 * `MAX_SUB_SEARCHES` sub-searches of two keys each, and its nine keys.
 */
export const MAX_INPUT_ELEMENTS = MAX_COLLECTIONS + MAX_SUB_SEARCHES * 3 + 16;
/** The resource list is a convenience for browsing clients, not a dump of the index. */
export const MAX_LISTED_RESOURCES = 500;
/** Error messages are one line and short: they end up in a model's context. */
export const MAX_MESSAGE_CHARS = 500;
