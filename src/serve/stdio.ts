import type { CliContext } from '../cli/context.js';
import type { Lifecycle } from '../lifecycle/host.js';
import { serveStdioConnection } from '../mcp/stdio/connection.js';
import { type ServingOptions, serveMcp } from './serve-mcp.js';
import { STARTUP_PPID } from './startup.js';

/**
 * `qmd mcp` over stdio: one client, one server pinned to the protocol era it opens with.
 * Its departure can reach us more than one way (stdin EOF, a stdout error, the connection
 * reporting either); they are the one pipe departure of the machine, so whichever comes first
 * starts teardown and the others neither start a second one nor escalate. Teardown:
 * `closeTransport` stops reading, the drain waits for the replies owed to every request read
 * (an EOF drains: `printf … | qmd mcp` gets every answer), `disposeStore` closes the server.
 */
export function serveStdio(ctx: CliContext, serving: ServingOptions = {}): Promise<Lifecycle> {
  return serveMcp(ctx, {
    // A small index is read through after the handshake: the client's first reply waits for
    // nothing but the open (docs/design.md §5, "Start-up").
    serving: { check: 'handshake', ...serving },
    role: 'plain',
    sources: {
      stdin: process.stdin,
      stdout: process.stdout,
      parent: { ppid: () => process.ppid, original: STARTUP_PPID },
    },
    async open({ createServer, lifecycle, protocolOut, log, record }) {
      // Each request read is one unit of the drain until its reply is written; the tool
      // handlers inside run uncounted, so one request counts once.
      const connection = serveStdioConnection({
        createServer: () => createServer(lifecycle.gate.uncounted()),
        stdin: process.stdin,
        stdout: protocolOut,
        log,
        gate: lifecycle.gate,
        onOpening: (client) => record.setClient(client),
        // Like stdin and the parent watch, the transport's close can only start teardown: once
        // teardown runs, the transport closes because teardown closed it.
        onClosed: (cause) => {
          if (lifecycle.state() !== 'connected') return;
          if (cause === 'stdout') lifecycle.trigger({ type: 'stdout.closed' });
          else lifecycle.trigger({ type: 'transport.closed' });
        },
      });
      return { close: () => connection.close(), release: () => connection.release() };
    },
  });
}
