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
    },
  );
  registerQueryTool(server, deps);
  registerGetTool(server, deps);
  registerMultiGetTool(server, deps);
  registerStatusTool(server, deps);
  registerDocumentResource(server, deps);
  return server;
}
