import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { ErrorCode, type ListResourcesResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { isQmdError, QmdError } from '../errors.js';
import type { McpDeps } from './deps.js';
import { MAX_LISTED_RESOURCES, MAX_REF_CHARS } from './limits.js';
import { assertInsideCollections, decodePath, documentUri } from './refs.js';
import { describeFailure, throwIfAborted } from './run.js';

/** MCP's code for "resource not found" (spec, resources: error handling). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * `qmd://{+path}`: every indexed document as a resource (`qmd://notes/a%20b.md`, segments
 * percent-encoded). Reads and lists go through the gate like tool calls. Unlike a tool, a
 * failed read can only be a JSON-RPC error: resources have no `isError` result.
 */
export function registerDocumentResource(server: McpServer, deps: McpDeps): void {
  const template = new ResourceTemplate('qmd://{+path}', {
    list: (extra) =>
      deps.gate.run((signal) => guarded(deps, signal, 'resource list', () => listDocuments(deps)), {
        signal: extra.signal,
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
    (uri, variables, extra) =>
      deps.gate.run(
        (signal) => guarded(deps, signal, 'resource read', () => readDocument(deps, uri, variables, signal)),
        { signal: extra.signal },
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
  const path = decodePath(Array.isArray(raw) ? raw.join('/') : (raw ?? ''));
  if (path.length === 0 || path.length > MAX_REF_CHARS) {
    throw new QmdError('BAD_ARGUMENT', `a document URI is qmd://collection/path.md (1-${MAX_REF_CHARS} chars)`);
  }
  assertInsideCollections(path);
  const doc = deps.store.get(path);
  return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: doc.text }] };
}

/**
 * Up to MAX_LISTED_RESOURCES indexed files, in collection/path order. The Store API has no
 * listing yet, so this asks `multiGet` for every document with a 1-byte budget: each match
 * comes back by name in `skipped` (or in `documents` if empty). It reads every body once;
 * a `listDocuments({ limit })` in the store would make it an index-only query.
 */
function listDocuments(deps: McpDeps): ListResourcesResult {
  if (deps.store.listCollections().every((c) => c.documents === 0)) return { resources: [] };
  const { documents, skipped } = deps.store.multiGet('**', { maxBytes: 1 });
  const files = [...documents.map((d) => d.file), ...skipped.map((s) => s.file)].sort();
  return { resources: files.slice(0, MAX_LISTED_RESOURCES).map((file) => ({ uri: documentUri(file), name: file })) };
}

async function guarded<T>(deps: McpDeps, signal: AbortSignal, where: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw rpcError(error, describeFailure(error, signal, deps.log, where));
  }
}

/**
 * A plain Error with a numeric `code`: the SDK sends `{ code, message }` as they are. An
 * `McpError` would arrive as "MCP error -32002: MCP error -32002: …" (its constructor prefixes
 * the message, then the client's does again; measured, SDK 1.32.2).
 */
function rpcError(error: unknown, message: string): Error {
  const code = !isQmdError(error)
    ? ErrorCode.InternalError
    : error.code === 'NOT_FOUND' || error.code === 'OUTSIDE_COLLECTIONS'
      ? RESOURCE_NOT_FOUND
      : error.code === 'BAD_ARGUMENT'
        ? ErrorCode.InvalidParams
        : ErrorCode.InternalError;
  return Object.assign(new Error(message), { code });
}
