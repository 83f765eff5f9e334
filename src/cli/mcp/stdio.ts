import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { InspectionEvent } from 'xstate';
import { createLifecycle, type Lifecycle } from '../../lifecycle/host.js';
import { createMcpServer } from '../../mcp/server.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { packageVersion } from '../version.js';
import { readMcpEnv } from './config.js';
import { claimStdout } from './stdout-guard.js';

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
  const store = openStore(ctx.indexPath, { readonly: true, log, failpoints });

  const inspect: Array<(event: InspectionEvent) => void> = [];
  if (config.inspectUrl) {
    // Loaded only when asked for: ws and @statelyai/inspect stay off the start-up path.
    const { createInspectObserver } = await import('../../viz/inspect-observer.js');
    inspect.push(createInspectObserver(config.inspectUrl, log).observe);
  }

  const lifecycle = createLifecycle({
    closeTransport: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      await server.close();
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      await store.close();
    },
    log,
    ...(config.drainTimeoutMs !== undefined && { drainTimeoutMs: config.drainTimeoutMs }),
    ...(config.stepTimeoutMs !== undefined && { stepTimeoutMs: config.stepTimeoutMs }),
    ...(config.watchdogMs !== undefined && { watchdogMs: config.watchdogMs }),
    ...(config.traceFile !== undefined && { traceFile: config.traceFile }),
    inspect,
  });
  const server = createMcpServer({ store, gate: lifecycle.gate, failpoints, log, version: packageVersion() });
  const transport = new StdioServerTransport(process.stdin, protocolOut);
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
