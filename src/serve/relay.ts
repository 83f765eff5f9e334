import type { CliContext } from '../cli/context.js';
import { modelFlags } from '../cli/query-models.js';
import { packageVersion } from '../cli/version.js';
import { createLifecycle, type Lifecycle } from '../lifecycle/host.js';
import { claimStdout } from '../mcp/stdio/stdout-guard.js';
import { childExecArgv } from '../node-flags.js';
import { type ConnectResult, connectShared, DEFAULT_CONNECT_BOUND_MS, successorStarting } from '../relay/connect.js';
import type { Greeting } from '../relay/greeting.js';
import { launchDetached } from '../relay/launch.js';
import {
  hostFacts,
  legacySharedPaths,
  ownSocketPath,
  retiringRecordPath,
  type SharedPaths,
  sharedPaths,
} from '../relay/paths.js';
import { recordProcess } from '../relay/process-record.js';
import { createRelay, type OpenHint, type Upstream } from '../relay/relay.js';
import { ask, askStatus } from './control/client.js';
import { type PidRecord, writeRecord } from './daemon/pidfile.js';
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
  const facts = hostFacts(ctx.env);
  const paths = sharedPaths(ctx.indexPath, facts);
  const oldPlaces = legacySharedPaths(ctx.indexPath, facts);
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
  const retire = async (older: Greeting, withinMs: number, at: SharedPaths): Promise<boolean> => {
    const asked = await ask(
      at.socket,
      { qmd: 'control', op: 'retire', index: ctx.indexPath, version: shared.version },
      withinMs,
    );
    if ('unreachable' in asked) return true;
    asked.socket.destroy();
    const { reply } = asked;
    if (reply.ok && reply.op === 'retire') {
      const where = at.dir === paths.dir ? '' : ` at an older qmd's place ${at.dir}`;
      log.line(
        `the shared server (pid ${older.pid})${where} is qmd ${older.version}: starting one of qmd ${shared.version}; ` +
          `the old one leaves once its ${reply.sessions} client(s) have`,
      );
      // A qmd that old has no socket of its own to answer on once retired: this record lets `qmd status` show
      // it until it has left (a server that has one writes the same record itself).
      noteRetiring(at, older, `replaced by qmd ${shared.version}`);
      return true;
    }
    const why = reply.ok ? `it answered ${reply.op}` : reply.error;
    log.warn(
      `the shared server (pid ${older.pid}) is qmd ${older.version}, older than this relay's ${shared.version}, ` +
        `and stays (${why}); using it`,
    );
    return false;
  };

  const boundMs = shared.connectBoundMs ?? DEFAULT_CONNECT_BOUND_MS;
  /** What each shared upstream is: where it listens, its socket file, its pid (for `probe` and `hung`). */
  const found = new WeakMap<Upstream, { paths: SharedPaths; inode?: number | bigint; pid: number }>();
  const find = (signal: AbortSignal, hint: OpenHint = {}) => {
    const hung = hint.hung === undefined ? undefined : found.get(hint.hung);
    return connectShared({
      paths,
      index: ctx.indexPath,
      model: embed.model ?? null,
      boundMs,
      signal,
      // QMD_EMBED_MODEL reaches it in the environment it inherits; only the flag is handed on.
      startServer: () => startSharedServer(ctx, paths.log, embed.modelSource === 'flag' ? embed.model : undefined),
      replaceOlder: { version: shared.version, retire },
      oldPlaces,
      ...(hung?.inode !== undefined && hung.paths === paths && { hungInode: hung.inode }),
    });
  };
  const sharedUpstream = (result: Extract<ConnectResult, { socket: unknown }>): Upstream => {
    const socket = result.socket;
    const upstream: Upstream = {
      stream: socket,
      kind: 'shared',
      pid: result.greeting.pid,
      release: async () => {
        socket.destroy();
      },
    };
    found.set(upstream, {
      paths: result.paths,
      pid: result.greeting.pid,
      ...(result.inode !== undefined && { inode: result.inode }),
    });
    return upstream;
  };

  let warnedAlone = false;
  const open = async (signal: AbortSignal, hint?: OpenHint): Promise<Upstream | null> => {
    const result = await find(signal, hint);
    if (signal.aborted) {
      if ('socket' in result) result.socket.destroy();
      return null;
    }
    if ('socket' in result) return sharedUpstream(result);
    // It could not open the store; this process would fail the same way.
    if ('failed' in result)
      throw Object.assign(new Error(`the shared server could not start: ${result.failed}`), { code: result.code });
    const why = 'refused' in result ? result.refused : 'hung' in result ? result.hung : result.unreachable;
    if (!warnedAlone || hint?.hung !== undefined) {
      warnedAlone = true;
      log.warn(`shared server unavailable (${why}); serving this client alone, and trying to rejoin one`);
    }
    const { serveInProcess } = await import('./in-process.js');
    return serveInProcess(ctx, lifecycle);
  };
  /**
   * Serving alone: a shared server that answers now, `'soon'` when a successor has claimed the
   * index and is not listening yet (the relay keeps its wait short then), or null; never the
   * local fallback.
   */
  const rejoin = async (signal: AbortSignal, hint?: OpenHint): Promise<Upstream | 'soon' | null> => {
    const result = await find(signal, hint);
    if ('socket' in result) {
      if (!signal.aborted) return sharedUpstream(result);
      result.socket.destroy();
      return null;
    }
    return successorStarting(paths) ? 'soon' : null;
  };
  /**
   * Whether the server behind `upstream` still answers: its control socket, where no queue of
   * requests stands in front of the answer. A server that gave its place up (it retires, or was
   * taken for hung) answers on its own socket instead (`ownSocketPath`).
   */
  const probe = async (upstream: Upstream): Promise<boolean> => {
    const known = found.get(upstream);
    if (known === undefined) return true;
    // Both at once: a stopped server answers neither, and each wait is the whole bound.
    const answers = await Promise.all([
      askStatus(known.paths.socket, boundMs),
      askStatus(ownSocketPath(known.paths, known.pid), boundMs),
    ]);
    return answers.some((asked) => !('unreachable' in asked) && asked.pid === known.pid);
  };

  const record = recordProcess(facts, {
    role: 'relay',
    index: ctx.indexPath,
    ppid: STARTUP_PPID,
    version: packageVersion(),
  });
  void lifecycle.done.then(() => record.remove());
  const relay = createRelay({
    stdin: process.stdin,
    stdout: protocolOut,
    gate: lifecycle.gate,
    log,
    open,
    rejoin,
    probe,
    ...(shared.rejoinMs !== undefined && { rejoinMs: shared.rejoinMs }),
    ...(shared.silenceMs !== undefined && { silenceMs: shared.silenceMs }),
    onFailed: () => {
      // As plain `qmd mcp` does when its store will not open: exit 1, at once.
      process.exitCode = 1;
      void lifecycle.shutdown('nothing can serve this client');
    },
    // `qmd mcp stop --shared --all`: the relay ends with its server (exit 0).
    onStopped: (reason) => void lifecycle.shutdown(reason),
    onOpening: (client) => record.setClient(client),
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
 * Records a retired server beside its old socket, where a server that retires writes its own
 * record too (either is enough: `qmd status` derives its own socket from the pid).
 */
function noteRetiring(at: SharedPaths, older: Greeting, why: string): void {
  const path = retiringRecordPath(at, older.pid);
  try {
    const record: PidRecord = {
      pid: older.pid,
      instance: '',
      host: '',
      port: 0,
      url: '',
      index: older.index,
      version: older.version,
      startedAt: new Date().toISOString(),
      control: '',
      retiring: why,
    };
    writeRecord(path, record);
  } catch {
    // Information only.
  }
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
  // Only the flag is handed on: QMD_WATCH=0 reaches it in the environment it inherits.
  const watch = ctx.config.watch.off === '--no-watch' ? ['--no-watch'] : [];
  launchDetached({
    execPath: process.execPath,
    args: [...childExecArgv(process.execArgv), process.argv[1] ?? '', ...flags, 'mcp', '--shared-server', ...watch],
    logPath,
    env: { ...ctx.env, QMD_INDEX: ctx.indexPath },
    onError: (error) => ctx.log.warn(`cannot start the shared server: ${error.message}`),
  });
}
