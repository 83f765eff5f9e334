import type { Lifecycle } from '../../lifecycle/host.js';
import { serveStdioConnection } from '../../mcp/stdio/connection.js';
import type { CliContext } from '../context.js';
import { STARTUP_PPID } from '../startup.js';
import { serveMcp } from './serve.js';

/**
 * `qmd mcp` over stdio: one client, one server pinned to the protocol era it opens with.
 * Its departure can reach us three ways (stdin EOF, a stdout error, SDK v2's transport closing
 * itself on either); all three are the one pipe departure of the machine, so whichever comes
 * first starts teardown and the others neither start a second one nor escalate.
 */
export function serveStdio(ctx: CliContext): Promise<Lifecycle> {
  return serveMcp(ctx, {
    sources: {
      stdin: process.stdin,
      stdout: process.stdout,
      parent: { ppid: () => process.ppid, original: STARTUP_PPID },
    },
    async open({ createServer, lifecycle, protocolOut, log }) {
      const connection = serveStdioConnection({
        createServer: () => createServer(),
        stdin: process.stdin,
        stdout: protocolOut,
        log,
        // Like stdin and the parent watch, the transport's close can only start teardown: once
        // teardown runs, the transport closes because teardown closed it.
        onClosed: (cause) => {
          if (lifecycle.state() !== 'connected') return;
          if (cause === 'stdin') lifecycle.trigger({ type: 'stdin.end' });
          else if (cause === 'stdout') lifecycle.trigger({ type: 'stdout.closed' });
          else lifecycle.trigger({ type: 'transport.closed' });
        },
      });
      return { close: () => connection.close() };
    },
  });
}
