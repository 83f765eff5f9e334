import { McpServer } from '@modelcontextprotocol/server';
import type { McpDeps } from './deps.js';
import { buildInstructions } from './instructions.js';
import { MAX_INPUT_ELEMENTS } from './limits.js';
import { registerDocumentResource } from './resources.js';
import { registerGetTool } from './tools/get.js';
import { registerMultiGetTool } from './tools/multi-get.js';
import { registerQueryTool } from './tools/query.js';
import { registerStatusTool } from './tools/status.js';

export type { McpDeps } from './deps.js';

/**
 * How long a 2026-07-28 client may keep what it listed (`ttlMs`; the SDK's default is 0,
 * never). The tools and the resource template are fixed in this binary: they cannot change
 * while a server runs, only when a different qmd replaces it, so a client may keep them an
 * hour (the peer: 60 s). `server/discover` also carries the instructions, which list the
 * collections and contexts as they were when the server was built; `qmd collection add` or
 * `qmd context add` beside it changes them, so a minute, as the peer. `private`: they name
 * local paths and notes, for this client only.
 */
export const CACHE_HINTS = {
  'tools/list': { ttlMs: 60 * 60 * 1000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 60 * 60 * 1000, cacheScope: 'private' },
  'server/discover': { ttlMs: 60 * 1000, cacheScope: 'private' },
} as const;

/**
 * The `qmd mcp` server: four read-only tools (`query`, `get`, `multi_get`, `status`) and the
 * `qmd://{+path}` resource template, every handler run through `deps.gate`. Not connected:
 * the caller picks the transport (stdio or HTTP) and owns `close()`, which aborts in-flight
 * handlers' signals (the SDK's `Protocol._onclose`, 2.4.0).
 */
export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(
    { name: 'qmd', version: deps.version },
    {
      instructions: buildInstructions(deps.store.listCollections(), deps.store.listContexts()),
      maxToolInputElements: MAX_INPUT_ELEMENTS,
      cacheHints: CACHE_HINTS,
    },
  );
  registerQueryTool(server, deps);
  registerGetTool(server, deps);
  registerMultiGetTool(server, deps);
  registerStatusTool(server, deps);
  registerDocumentResource(server, deps);
  return server;
}
