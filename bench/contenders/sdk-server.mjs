// The bare SDK server: `McpServer` + `StdioServerTransport` with one tool, nothing else — what
// the SDK v2 README builds (@modelcontextprotocol/server 2.4.0, the SDK qmd stands on). Its
// transport closes itself on stdin EOF and the process leaves once nothing holds the event
// loop; it runs no teardown of its own. SIGTERM kills it by default.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const server = new McpServer({ name: 'bare-sdk', version: '0.0.0' });
server.registerTool(
  'echo',
  { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);
await server.connect(new StdioServerTransport());
