import type { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createLifecycle, type Lifecycle } from '../../lifecycle/host.js';
import { createMcpServer } from '../../mcp/server.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { embedStoreOptions } from '../embed-model.js';
import { STARTUP_PPID } from '../startup.js';
import { packageVersion } from '../version.js';
import { envLifecycleOptions, readMcpEnv } from './config.js';
import { createStdinFilter } from './stdin-filter.js';
import { claimStdout } from './stdout-guard.js';

/** A JSON-RPC message larger than this is refused (the SDK's own stdio buffer caps at 10 MiB). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

function replyError(out: Writable, code: number, message: string): void {
  out.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } })}\n`);
}

/**
 * `qmd mcp` over stdio: the composition root of the server. The store opens read-only (it
 * still checkpoints on close), the server is built with the lifecycle's gate, connected, and
 * the lifecycle started right after `connect`; from then on the machine owns the exit.
 * `closeTransport` = `server.close()` (which aborts in-flight handlers' signals),
 * `disposeStore` = `store.close()` (the LLM first, then the database).
 */
export async function serveStdio(ctx: CliContext): Promise<Lifecycle> {
  const { log } = ctx;
  const protocolOut = claimStdout(log);
  const config = readMcpEnv(ctx.env);
  const { failpoints } = config;
  // The embedder is created lazily by the store: start-up does not load node-llama-cpp.
  const store = openStore(ctx.indexPath, { readonly: true, log, failpoints, ...embedStoreOptions(ctx) });

  const fromEnv = await envLifecycleOptions(config, log);

  const input = createStdinFilter(process.stdin, {
    maxLineBytes: MAX_MESSAGE_BYTES,
    onOversized: (bytes) => {
      log.warn(`refused a request of ${bytes} bytes (the limit is ${MAX_MESSAGE_BYTES})`);
      replyError(protocolOut, -32600, `Request too large: ${bytes} bytes (the limit is ${MAX_MESSAGE_BYTES})`);
    },
  });

  const lifecycle = createLifecycle({
    parent: { ppid: () => process.ppid, original: STARTUP_PPID },
    closeTransport: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      await server.close();
      input.detach();
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      await store.close();
    },
    log,
    ...fromEnv,
  });
  const server = createMcpServer({ store, gate: lifecycle.gate, failpoints, log, version: packageVersion() });
  const transport = new StdioServerTransport(input.stream, protocolOut);
  // The SDK drops a line that is not JSON (or not JSON-RPC) without a word to anyone; answer
  // it as JSON-RPC says (id null) and note it on stderr. The server keeps serving.
  server.server.onerror = (error) => {
    if (error instanceof SyntaxError) replyError(protocolOut, -32700, `Parse error: ${error.message}`);
    else if (error.name === 'ZodError') replyError(protocolOut, -32600, 'Invalid request: not a JSON-RPC 2.0 message');
    log.warn(`protocol error: ${error.message.split('\n')[0]}`);
  };
  // A transport that closes by itself (not through teardown) leaves a deaf server: leave.
  server.server.onclose = () => {
    if (lifecycle.state() === 'connected') void lifecycle.shutdown('transport closed');
  };
  await server.connect(transport);
  lifecycle.start();

  // A failure nobody caught is a bug: say so on stderr and leave through the machine (exit 1),
  // rather than dying with the index open.
  const fatal = (kind: string) => (error: unknown) => {
    log.warn(`${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
    void lifecycle.shutdown(kind);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));

  // For the watchdog's end-to-end test: a ref'd handle nobody will ever clear.
  if (failpoints.has('server.leak')) void failpoints.hit('server.leak');
  return lifecycle;
}
