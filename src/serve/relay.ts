import type { CliContext } from '../cli/context.js';
import { modelFlags } from '../cli/query-models.js';
import { createLifecycle, type Lifecycle } from '../lifecycle/host.js';
import { claimStdout } from '../mcp/stdio/stdout-guard.js';
import { connectShared, DEFAULT_CONNECT_BOUND_MS } from '../relay/connect.js';
import type { Greeting } from '../relay/greeting.js';
import { launchDetached } from '../relay/launch.js';
import { sharedPaths } from '../relay/paths.js';
import { createRelay, type Upstream } from '../relay/relay.js';
import { ask } from './control/client.js';
import { lifecycleOptions } from './lifecycle-options.js';
import { STARTUP_PPID } from './startup.js';

/**
 * `qmd mcp --shared` (or `QMD_SHARED=1`): what an MCP client starts, relaying its JSON-RPC to
 * the one shared server of its index over a Unix socket, and starting that server if none
 * answers. It hosts the same lifecycle machine as `qmd mcp`, with the same breadcrumbs, exit
 * codes, watchdog and trace:
 * - `closeTransport`: stop reading the client, half-close the socket (the server's session
 *   begins its own teardown);
 * - `draining`: the replies owed for requests already forwarded (one gate unit each);
 * - `disposingStore`: release the session (close the socket).
 * It loads no SDK server, no store and no model: only if the shared server cannot be reached
 * (or its socket cannot be trusted) does it load them and serve its client itself, once
 * warned. Whatever it serves, it never outlives its client.
 */
export async function serveRelay(ctx: CliContext): Promise<Lifecycle> {
  const { log } = ctx;
  const protocolOut = claimStdout(log);
  // Read now, so a malformed variable fails this start as it fails plain `qmd mcp`'s.
  const { failpoints, shared, embed, models } = ctx.config;
  void models; // read now too: a bad QMD_GPU fails the relay's start, not the server's
  const paths = sharedPaths(ctx.indexPath, ctx.env);
  const lifecycle = createLifecycle({
    stdin: process.stdin,
    stdout: process.stdout,
    parent: { ppid: () => process.ppid, original: STARTUP_PPID },
    log,
    ...(await lifecycleOptions(ctx.config.lifecycle, log)),
    // Replies its client never read must not hold the exit past teardown (§2.1).
    unwritten: () => protocolOut.writableLength + process.stdout.writableLength,
  });

  /**
   * An older qmd serves this index (an upgrade, with its clients still connected): ask it to
   * stop taking sessions and hand over its socket. Its own clients keep it until they leave.
   */
  const retire = async (older: Greeting, withinMs: number): Promise<boolean> => {
    const asked = await ask(
      paths.socket,
      { qmd: 'control', op: 'retire', index: ctx.indexPath, version: shared.version },
      withinMs,
    );
    if ('unreachable' in asked) return true;
    asked.socket.destroy();
    const { reply } = asked;
    if (reply.ok && reply.op === 'retire') {
      log.line(
        `the shared server (pid ${older.pid}) is qmd ${older.version}: starting one of qmd ${shared.version}; ` +
          `the old one leaves once its ${reply.sessions} client(s) have`,
      );
      return true;
    }
    const why = reply.ok ? `it answered ${reply.op}` : reply.error;
    log.warn(
      `the shared server (pid ${older.pid}) is qmd ${older.version}, older than this relay's ${shared.version}, ` +
        `and stays (${why}); using it`,
    );
    return false;
  };

  let warnedAlone = false;
  const open = async (signal: AbortSignal): Promise<Upstream | null> => {
    const found = await connectShared({
      paths,
      index: ctx.indexPath,
      model: embed.model ?? null,
      boundMs: shared.connectBoundMs ?? DEFAULT_CONNECT_BOUND_MS,
      signal,
      // QMD_EMBED_MODEL reaches it in the environment it inherits; only the flag is handed on.
      startServer: () => startSharedServer(ctx, paths.log, embed.modelSource === 'flag' ? embed.model : undefined),
      replaceOlder: { version: shared.version, retire },
    });
    if (signal.aborted) {
      if ('socket' in found) found.socket.destroy();
      return null;
    }
    if ('socket' in found) {
      const socket = found.socket;
      return {
        stream: socket,
        kind: 'shared',
        release: async () => {
          socket.destroy();
        },
      };
    }
    // It could not open the store; this process would fail the same way.
    if ('failed' in found)
      throw Object.assign(new Error(`the shared server could not start: ${found.failed}`), { code: found.code });
    if (!warnedAlone) {
      warnedAlone = true;
      const why = 'refused' in found ? found.refused : 'hung' in found ? found.hung : found.unreachable;
      log.warn(`shared server unavailable (${why}); serving this client alone`);
    }
    const { serveInProcess } = await import('./in-process.js');
    return serveInProcess(ctx, lifecycle);
  };

  const relay = createRelay({
    stdin: process.stdin,
    stdout: protocolOut,
    gate: lifecycle.gate,
    log,
    open,
    onFailed: () => {
      // As plain `qmd mcp` does when its store will not open: exit 1, at once.
      process.exitCode = 1;
      void lifecycle.shutdown('nothing can serve this client');
    },
    // `qmd mcp stop --shared --all`: the relay ends with its server (exit 0).
    onStopped: (reason) => void lifecycle.shutdown(reason),
  });
  relay.start();
  lifecycle.start({
    closeTransport: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      await relay.close();
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      await relay.release();
    },
  });
  return lifecycle;
}

/**
 * Starts the shared server of this index through the launcher (`src/relay/launch.ts`): it ends
 * up in no client's process tree, group or session. It is given this relay's index, and its
 * `--embed-model` when it has one (absolute); its environment is the relay's. Given no model, it
 * uses the one the index remembers, as every reader does. The GPU choice and the query models
 * are handed on as flags too, when a flag or variable set them (`modelFlags`).
 */
function startSharedServer(ctx: CliContext, logPath: string, model: string | undefined): void {
  const flags = [
    '--index',
    ctx.indexPath,
    ...(model === undefined ? [] : ['--embed-model', model]),
    ...modelFlags(ctx),
  ];
  launchDetached({
    execPath: process.execPath,
    args: [...process.execArgv, process.argv[1] ?? '', ...flags, 'mcp', '--shared-server'],
    logPath,
    env: { ...ctx.env, QMD_INDEX: ctx.indexPath },
    onError: (error) => ctx.log.warn(`cannot start the shared server: ${error.message}`),
  });
}
