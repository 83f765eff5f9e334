// The bare SDK v1 server (@modelcontextprotocol/sdk 1.32.2, the SDK qmd stood on before v2):
// `McpServer` + `StdioServerTransport` with one tool, nothing else — what
// the SDK's README builds. It runs no teardown at all: `StdioServerTransport` never notices
// EOF (SDK 1.32.2, typescript-sdk#2002), so it leaves only because nothing else holds the
// event loop once stdin ends (docs/design.md §5: 7.7–13.5 ms). SIGTERM kills it by default.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const server = new McpServer({ name: 'bare-sdk', version: '0.0.0' });
server.registerTool(
  'echo',
  { description: 'Returns its text.', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);
await server.connect(new StdioServerTransport());
