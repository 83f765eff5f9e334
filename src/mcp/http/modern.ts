import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpServer } from '@modelcontextprotocol/server';
import type { Log } from '../../log.js';

/**
 * The 2026-07-28 leg of `qmd mcp --http`: sessionless MCP, one request per exchange
 * (`server/discover`, then each request carrying its own protocol-version envelope), served by
 * SDK v2's `createMcpHandler` from the same server factory as the 2025 sessions. It is strict
 * (`legacy: 'reject'`): 2025 traffic never reaches it, `app.ts` routes that to the sessions
 * with the SDK's own classifier (`isLegacyRequest`), so the two legs never disagree.
 *
 * Every exchange gets a fresh `McpServer` (the SDK's per-request model); they all share the
 * one store, model and gate the factory closes over.
 */
export interface ModernLeg {
  /** Serves one exchange whose body the app has already read and parsed. Never rejects. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** Aborts the exchanges still in flight and closes their servers (teardown, after the drain). */
  close(): Promise<void>;
}

export function createModernLeg(options: { createServer: () => McpServer; maxBodyBytes: number; log: Log }): ModernLeg {
  const { log } = options;
  const handler = createMcpHandler(() => options.createServer(), {
    legacy: 'reject',
    maxRequestBodySize: options.maxBodyBytes,
    // Reporting only: rejected requests (bad envelope, unsupported revision) are answered by
    // the SDK with the spec's codes; the line helps whoever reads the server's stderr.
    onerror: (error) => log.line(`http: ${error.message.split('\n')[0]}`),
  });
  const serve = toNodeHandler(handler);
  return {
    async handle(req, res, body) {
      try {
        await serve(req, res, body);
      } catch (error) {
        log.warn(`http: ${req.method} ${req.url} failed: ${(error as Error).message}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      }
    },
    close: () => handler.close(),
  };
}
