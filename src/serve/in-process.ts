import { Duplex, PassThrough } from 'node:stream';
import type { CliContext } from '../cli/context.js';
import type { Lifecycle } from '../lifecycle/host.js';
import { serveStdioConnection } from '../mcp/stdio/connection.js';
import type { Upstream } from '../relay/relay.js';
import { leaveDamaged, openServing } from './serve-mcp.js';

/**
 * The relay's fallback (relay.ts): this process serves its client itself with what `qmd mcp`
 * over stdio is made of (`openServing`, the stdio connection), through an in-memory pipe the
 * relay keeps talking to. The relay already counts each request it forwards, so the handlers
 * run through the gate's uncounted view and the connection counts nothing: one request, one
 * unit. Serving alone, it keeps the index fresh as `qmd mcp` does, its watcher owned by the
 * relay's lifecycle (a relay connected to a shared server never watches: the server does).
 */
export function serveInProcess(
  ctx: CliContext,
  lifecycle: Pick<Lifecycle, 'gate' | 'ownWatcher' | 'shutdown'>,
): Upstream {
  const { gate } = lifecycle;
  // As plain `qmd mcp`: a small index is read through after the handshake (the watcher starts
  // once it has been), and damage found while serving ends the relay as it ends a server (exit
  // 1, one line).
  const { store, createServer, watching, onDamaged, checkAfterHandshake, startWatching } = openServing(ctx, {
    check: 'handshake',
  });
  onDamaged(leaveDamaged(lifecycle, ctx.log));
  lifecycle.ownWatcher(watching);
  startWatching();
  // Two pipes make one duplex for the relay: it writes requests into one, reads replies from the other.
  const requests = new PassThrough();
  const replies = new PassThrough();
  checkAfterHandshake(replies);
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
      // The watcher before the store it writes (idempotent: the lifecycle may have closed it).
      await watching.close();
      await connection.release();
      stream.destroy();
      await store.close();
    },
  };
}
