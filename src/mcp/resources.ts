import {
  type ListResourcesResult,
  type McpServer,
  ProtocolErrorCode,
  type ReadResourceResult,
  ResourceNotFoundError,
  ResourceTemplate,
  type Variables,
} from '@modelcontextprotocol/server';
import { isQmdError, QmdError } from '../errors.js';
import type { McpDeps } from './deps.js';
import { withContext } from './format.js';
import { MAX_LISTED_RESOURCES, MAX_REF_CHARS } from './limits.js';
import { documentUri } from './refs.js';
import { describeFailure, throwIfAborted } from './run.js';

/**
 * `qmd://{+path}`: every indexed document as a resource (`qmd://notes/a%20b.md`, segments
 * percent-encoded). Reads and lists go through the gate like tool calls. Unlike a tool, a
 * failed read can only be a JSON-RPC error: resources have no `isError` result.
 */
export function registerDocumentResource(server: McpServer, deps: McpDeps): void {
  const template = new ResourceTemplate('qmd://{+path}', {
    list: (ctx) =>
      deps.gate.run((signal) => guarded(deps, signal, 'resource list', () => listDocuments(deps, signal)), {
        signal: ctx.mcpReq.signal,
      }),
  });
  server.registerResource(
    'document',
    template,
    {
      title: 'Indexed note',
      description: 'A markdown document from the index, addressed as qmd://collection/path.md.',
      mimeType: 'text/markdown',
    },
    (uri, variables, ctx) =>
      deps.gate.run(
        (signal) => guarded(deps, signal, 'resource read', () => readDocument(deps, uri, variables, signal), uri),
        { signal: ctx.mcpReq.signal },
      ),
  );
}

async function readDocument(
  deps: McpDeps,
  uri: URL,
  variables: Variables,
  signal: AbortSignal,
): Promise<ReadResourceResult> {
  const pending = deps.failpoints.hit('resource.read', signal);
  if (pending !== undefined) await pending;
  throwIfAborted(signal);
  const raw = variables.path;
  const path = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  if (path.length === 0 || path.length > MAX_REF_CHARS) {
    throw new QmdError('BAD_ARGUMENT', `a document URI is qmd://collection/path.md (1-${MAX_REF_CHARS} chars)`);
  }
  // As sent, still percent-encoded: the store decodes a qmd:// URI and decides what it may name.
  const doc = deps.store.get(`qmd://${path}`);
  // `name` and `title` as qmd 2.8 gives them (collection/path, the note's title).
  const contents = { uri: uri.href, name: doc.file, title: doc.title || doc.file, mimeType: 'text/markdown' };
  return { contents: [{ ...contents, text: withContext(doc.text, doc.context) }] };
}

/**
 * Up to MAX_LISTED_RESOURCES indexed files, in collection/path order. The Store API has no
 * listing yet, so this asks `multiGet` for every document with a 1-byte budget: each match
 * comes back by name in `skipped` (or in `documents` if empty). It reads every body once;
 * a `listDocuments({ limit })` in the store would make it an index-only query.
 */
async function listDocuments(deps: McpDeps, signal: AbortSignal): Promise<ListResourcesResult> {
  if (deps.store.listCollections().every((c) => c.documents === 0)) return { resources: [] };
  const { documents, skipped } = await deps.store.multiGet('**', { maxBytes: 1, signal });
  const files = [...documents.map((d) => d.file), ...skipped.map((s) => s.file)].sort();
  return { resources: files.slice(0, MAX_LISTED_RESOURCES).map((file) => ({ uri: documentUri(file), name: file })) };
}

async function guarded<T>(
  deps: McpDeps,
  signal: AbortSignal,
  where: string,
  work: () => T | Promise<T>,
  uri?: URL,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw rpcError(error, describeFailure(error, signal, deps.log, where), uri);
  }
}

/**
 * What the client gets for a failed read or list. A missing document, or one outside the
 * collections, is `ResourceNotFoundError`: code -32602 with `data: { uri }`, the MCP spec's
 * "resource not found" on every revision since 2026-07-28 (SDK v2; v1 sent -32002). Anything
 * else is a plain Error with a numeric `code`, which the SDK sends as `{ code, message, data }`.
 */
function rpcError(error: unknown, message: string, uri: URL | undefined): Error {
  if (isQmdError(error) && (error.code === 'NOT_FOUND' || error.code === 'OUTSIDE_COLLECTIONS') && uri) {
    return new ResourceNotFoundError(uri.href, message);
  }
  const code =
    isQmdError(error) && (error.code === 'BAD_ARGUMENT' || error.code === 'AMBIGUOUS')
      ? ProtocolErrorCode.InvalidParams
      : ProtocolErrorCode.InternalError;
  // Our code in `data` (`INDEX_CORRUPT`, `INDEX_LOCKED`, …): the one vocabulary the CLI uses
  // too, so a client can tell an index problem from a bug without parsing the message.
  return Object.assign(new Error(message), { code, ...(isQmdError(error) && { data: { code: error.code } }) });
}
