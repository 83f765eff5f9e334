import { Duplex, PassThrough } from 'node:stream';
import type { CliContext } from '../cli/context.js';
import type { InflightGate } from '../lifecycle/gate.js';
import type { Lifecycle } from '../lifecycle/host.js';
import { serveStdioConnection } from '../mcp/stdio/connection.js';
import type { Upstream } from '../relay/relay.js';
import { openServing, type ServingOptions, serveMcp } from './serve-mcp.js';
import { STARTUP_PPID } from './startup.js';

/**
 * `qmd mcp` over stdio: one client, one server pinned to the protocol era it opens with.
 * Its departure can reach us more than one way (stdin EOF, a stdout error, the connection
 * reporting either); they are the one pipe departure of the machine, so whichever comes first
 * starts teardown and the others neither start a second one nor escalate. Teardown:
 * `closeTransport` stops reading, the drain waits for the replies owed to every request read
 * (an EOF drains: `printf … | qmd mcp` gets every answer), `disposeStore` closes the server.
 */
export function serveStdio(ctx: CliContext, options: ServingOptions = {}): Promise<Lifecycle> {
  return serveMcp(
    ctx,
    {
      sources: {
        stdin: process.stdin,
        stdout: process.stdout,
        parent: { ppid: () => process.ppid, original: STARTUP_PPID },
      },
      async open({ createServer, lifecycle, protocolOut, log }) {
        // Each request read is one unit of the drain until its reply is written; the tool
        // handlers inside run uncounted, so one request counts once.
        const connection = serveStdioConnection({
          createServer: () => createServer(lifecycle.gate.uncounted()),
          stdin: process.stdin,
          stdout: protocolOut,
          log,
          gate: lifecycle.gate,
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
    },
    options,
  );
}

/**
 * The relay's fallback (relay.ts): this process serves its client itself, as `qmd mcp` does,
 * through an in-memory pipe the relay keeps talking to. The relay already counts each request
 * it forwards, so the handlers run through `gate`'s uncounted view and the connection counts
 * nothing: one request, one unit.
 */
export function serveInProcess(ctx: CliContext, gate: Pick<InflightGate, 'uncounted'>): Upstream {
  const { store, createServer } = openServing(ctx);
  // Two pipes make one duplex for the relay: it writes requests into one, reads replies from the other.
  const requests = new PassThrough();
  const replies = new PassThrough();
  const connection = serveStdioConnection({
    createServer: () => createServer(gate.uncounted()),
    stdin: requests,
    stdout: replies,
    log: ctx.log,
    onClosed: () => {},
  });
  const stream = Duplex.from({ writable: requests, readable: replies });
  return {
    stream,
    kind: 'local',
    release: async () => {
      await connection.release();
      stream.destroy();
      await store.close();
    },
  };
}
