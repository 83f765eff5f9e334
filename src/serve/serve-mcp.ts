import { existsSync, statSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/server';
import type { CliContext } from '../cli/context.js';
import { embedStoreOptions } from '../cli/embed-model.js';
import { modelStoreOptions } from '../cli/query-models.js';
import { packageVersion } from '../cli/version.js';
import { type AwaitingIndex, awaitIndex } from '../core/awaiting.js';
import { openReader } from '../core/open.js';
import type { Reader } from '../core/reader-types.js';
import type { StoreOptions } from '../core/types.js';
import type { QmdError } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import { type Clock, realClock } from '../lifecycle/clock.js';
import type { HandlerGate } from '../lifecycle/gate.js';
import { createLifecycle, type Lifecycle, type LifecycleOptions } from '../lifecycle/host.js';
import type { StdinSource } from '../lifecycle/stdin.js';
import { DEFAULT_EMBED_MODEL, defaultThreads, type ModelChoice } from '../llm/index.js';
import type { Log } from '../log.js';
import type { WatchStatus } from '../mcp/deps.js';
import { createMcpServer } from '../mcp/server.js';
import { claimStdout } from '../mcp/stdio/stdout-guard.js';
import { hostFacts } from '../relay/paths.js';
import { type RecordedProcess, recordProcess } from '../relay/process-record.js';
import { QUICK_CHECK_SMALL_BYTES } from '../store/integrity.js';
import { mistypedIndex } from '../store/paths.js';
import type { WatchIndex } from '../watch/types.js';
import { lifecycleOptions } from './lifecycle-options.js';
import { createListChangedNotifier } from './list-changed.js';
import { checkAfterHandshake, servedReader } from './served-reader.js';
import { STARTUP_PPID } from './startup.js';
import { createWatching, type Watching } from './watching.js';

/** What a transport is given to connect: everything is built, nothing listens yet. */
export interface TransportContext {
  /** A new `McpServer` over the shared store, with `gate` as its handlers' gate. */
  createServer(gate?: HandlerGate): McpServer;
  lifecycle: Lifecycle;
  /** The protocol stream onto fd 1: JSON-RPC only. */
  protocolOut: Writable;
  log: Log;
  failpoints: Failpoints;
  /** The shared store, for what is served beside MCP (HTTP's REST search). */
  store: Reader;
  /** This process's record for `qmd doctor` (`src/relay/process-record.ts`): the client's name goes there. */
  record: RecordedProcess;
  /** How the store is kept fresh, for what reports it beside MCP (the HTTP server's control socket). */
  watch: () => WatchStatus;
}

/** What a connected transport gives back: the two pieces of teardown that are its own. */
export interface OpenTransport {
  /** Teardown step 1: stop dispatching new requests (in-flight ones may finish: the drain). */
  close(): Promise<void>;
  /** Teardown step 2, before the store closes: cut what the drain left. */
  release?(): Promise<void>;
}

export interface McpTransport {
  /** What this root changes in how it serves (`openServing`). */
  serving?: ServingOptions;
  /** The trigger sources that are this transport's: stdio's pipes, or none over HTTP. */
  sources: Pick<LifecycleOptions, 'stdin' | 'stdout' | 'parent'>;
  /** What this process is, in its record (`src/relay/process-record.ts`). */
  role: 'plain' | 'http' | 'daemon';
  /** Connects; throws after closing what it opened if it cannot (the store is closed for it). */
  open(context: TransportContext): Promise<OpenTransport>;
}

/**
 * What a root may change in how it serves. `createEmbedder` is a seam for one benchmark: the
 * disposal contender (`bench/contenders/naive-server.ts`) passes a naive llama.cpp dispose
 * order; no flag or variable reaches it.
 */
export interface ServingOptions {
  /** The store's log, when it differs from the command's (the shared server notes model loads). */
  storeLog?: Log;
  createEmbedder?: StoreOptions['createEmbedder'];
  /** The watcher's engine, for tests and benchmarks that host a fake one; else `src/watch/index.ts`. */
  watchIndex?: () => Promise<WatchIndex>;
  /**
   * When a small index is read through (quick_check): `'open'`, before serving (the long-lived
   * servers: `--shared`'s, `--http`, which start once for many clients); `'handshake'`, after
   * the client's handshake (stdio and a relay serving alone, whose start is on the client's
   * path to its tools). Default `'open'`.
   */
  check?: 'open' | 'handshake';
  /** The clock of the deferred check's wait (`checkAfterHandshake`); tests give a fake one. */
  clock?: Clock;
}

/**
 * What every root serves: one store, an `McpServer` over it for each gate that asks, and the
 * store kept fresh (`watching`): the root gives it to its lifecycle, whose teardown owns it
 * from then on, and starts it once the lifecycle has started.
 */
export interface Serving {
  store: Reader;
  createServer(gate: HandlerGate): McpServer;
  watching: Watching;
  /**
   * `listener` hears, once, that the index file is damaged: found by a read while serving, or
   * by the check after the handshake. The root says so and leaves with exit 1 (`leaveDamaged`).
   */
  onDamaged(listener: (error: QmdError) => void): void;
  /**
   * Runs a deferred check once the client's handshake is over: `HANDSHAKE_QUIET_MS` after the
   * first reply through `out` (the `initialize` reply), or before the first read, whichever
   * comes first (`checkAfterHandshake`). A server with no deferred check leaves `out` as it is.
   */
  checkAfterHandshake(out: Writable): void;
  /**
   * Runs a deferred check still owed, now: the client is leaving (stdin ended) before its
   * handshake was quiet. What it finds is said and counted in the exit code like any damage.
   */
  checkBeforeLeaving(): void;
  /**
   * Starts the watcher once the index is known sound: at once when nothing is deferred, else
   * after the deferred check ran clean (never after damage: the server is leaving).
   */
  startWatching(): void;
}

/**
 * Opens the index read-only for serving (the model loads lazily, on the first vector query),
 * the same for stdio, HTTP, the relay's fallback and the shared server (whose `storeLog` notes
 * model loads). A damaged index is refused, and a server that learns of damage leaves (exit 1,
 * one line: docs/design.md §6, "A damaged index"):
 * - at open: the schema, and what every server's instructions read (the collections and
 *   contexts), whatever the index's size: damage there fails the start;
 * - a small index (at most 16 MiB) is read through by quick_check, at open or after the
 *   handshake (`ServingOptions.check`); a larger one is not (seconds at every start);
 * - damage met by any read while serving (`servedReader`) goes to `onDamaged`.
 *
 * No index yet (a client configured on a fresh machine, before the first `qmd collection add`,
 * would otherwise keep a dead server until the person restarts it): the server starts and serves anyway, creating nothing; its tools say `No index yet at PATH: qmd
 * collection add DIR` until the file appears, and the first call after that opens it as above,
 * checked at that open (`awaitIndex`). A path named by --index or QMD_INDEX whose folder does not
 * exist either is a typo, and still fails at once (`mistypedIndex`); the default one (a fresh
 * machine has no ~/.cache/qmd) and the peer's INDEX_PATH are served.
 */
export function openServing(ctx: CliContext, options: ServingOptions = {}): Serving {
  const { log } = ctx;
  const { failpoints } = ctx.config;
  const open = (quickCheck: StoreOptions['quickCheck']) =>
    openReader(ctx.indexPath, {
      readonly: true,
      quickCheck,
      log: options.storeLog ?? log,
      failpoints,
      queryWorker: ctx.config.queryWorker,
      ...embedStoreOptions(ctx),
      ...modelStoreOptions(ctx, { query: true }),
      ...(options.createEmbedder !== undefined && { createEmbedder: options.createEmbedder }),
    });
  let reader: Reader;
  let awaiting: AwaitingIndex | undefined;
  let deferCheck = false;
  if (existsSync(ctx.indexPath)) {
    deferCheck = options.check === 'handshake' && isSmallIndex(ctx.indexPath);
    reader = open(deferCheck ? false : 'small');
    try {
      reader.listCollections();
      reader.listContexts();
    } catch (error) {
      void reader.close();
      throw error;
    }
  } else {
    const mistyped = mistypedIndex(ctx.indexPath, ctx.env);
    if (mistyped !== undefined) throw mistyped;
    log.line(
      `No index yet at ${ctx.indexPath}: serving; the first qmd collection add makes it, and it is read from then on`,
    );
    const { embed, models } = ctx.config;
    const model: ModelChoice =
      embed.model === undefined
        ? { spec: DEFAULT_EMBED_MODEL, source: 'default' }
        : { spec: embed.model, source: embed.modelSource ?? 'flag' };
    reader = awaiting = awaitIndex(ctx.indexPath, () => open('small'), {
      model,
      // What `status` says of the models until the index exists (nothing is loaded before).
      models: {
        requested: models.gpu,
        threads: embed.threads ?? defaultThreads(),
        models: [],
        configured: { embed: model.spec, rerank: models.rerankModel ?? null, expand: models.expandModel ?? null },
      },
    });
  }
  const served = servedReader(reader, { deferCheck });
  const { store } = served;
  const version = packageVersion();
  const watching = keepFresh(ctx, reader, awaiting, options);
  const notifier = createListChangedNotifier({ clock: realClock, log });
  watching.onIndexed((change) => notifier.indexed(change));
  const watch = () => watching.report();
  return {
    store,
    createServer: (gate) => {
      const server = createMcpServer({ store, gate, failpoints, log, version, watch });
      notifier.track(server);
      // Its instructions are read; from here on a read waits for the deferred check, which runs
      // once the handshake is over (`checkAfterHandshake`) or before the first read.
      served.arm();
      return server;
    },
    // The notifier stops with the watcher: nothing is announced once teardown has begun.
    watching: {
      ...watching,
      close: (signal) => {
        notifier.close();
        return watching.close(signal);
      },
    },
    onDamaged: (listener) => served.onDamaged(listener),
    checkAfterHandshake: (out) => checkAfterHandshake(served, out, options.clock ?? realClock),
    checkBeforeLeaving: () => {
      served.arm();
      served.checkSoon();
    },
    startWatching: () => served.onSound(() => watching.start()),
  };
}

/** The served store kept fresh (watching.ts): the real reader now, or once an awaited index appears. */
function keepFresh(ctx: CliContext, store: Reader, awaiting: AwaitingIndex | undefined, options: ServingOptions) {
  return createWatching({
    config: ctx.config.watch,
    reader: awaiting === undefined ? () => store : () => awaiting.openedNow(),
    log: options.storeLog ?? ctx.log,
    failpoints: ctx.config.failpoints,
    ...(options.watchIndex !== undefined && { load: options.watchIndex }),
  });
}

/** At most `QUICK_CHECK_SMALL_BYTES`: what `quickCheck: 'small'` reads through. */
function isSmallIndex(file: string): boolean {
  try {
    return statSync(file).size <= QUICK_CHECK_SMALL_BYTES;
  } catch {
    return false;
  }
}

/**
 * A server that learns its index is damaged says so in the words every command uses (one
 * line, INDEX_CORRUPT's) and leaves through its lifecycle with exit 1: the request that met
 * the damage is answered with it first (the drain waits for it), and nothing more is served.
 */
export function leaveDamaged(
  lifecycle: { shutdown(reason?: string): unknown },
  log: Log,
  alsoTell?: (error: QmdError) => void,
): (error: QmdError) => void {
  return (error) => {
    log.line(`qmd: ${error.message}`);
    process.exitCode = 1;
    // After this turn: the call that met the damage hands its answer to the transport first.
    setImmediate(() => {
      alsoTell?.(error);
      void lifecycle.shutdown('the index is damaged');
    });
  };
}

/**
 * `qmd mcp`, whatever the transport, read top to bottom: stdout is claimed for the protocol,
 * the store opens (`openServing`), the lifecycle is created, the transport connects servers
 * built with the lifecycle's gate, and the lifecycle starts with the teardown that closes
 * exactly what was built:
 * `closeTransport` = the transport's `close()`, `disposeStore` = its `release()`, then
 * `store.close()` (the LLM first, then the database). From then on the machine owns the exit.
 * The store's watcher is the lifecycle's from the start (`ownWatcher`): it stops hearing
 * changes as `closeTransport` begins and is closed before `disposeStore`'s steps (§2.1).
 */
export async function serveMcp(ctx: CliContext, transport: McpTransport): Promise<Lifecycle> {
  const { log } = ctx;
  const protocolOut = claimStdout(log);
  const { failpoints } = ctx.config;
  const serving = openServing(ctx, transport.serving);
  const { store } = serving;
  const { stdin } = transport.sources;
  const lifecycle = createLifecycle({
    ...transport.sources,
    // A client that leaves before its handshake is quiet still has the file read through: the
    // check owed runs before the lifecycle hears stdin's end, so its verdict is in the exit code.
    ...(stdin && { stdin: beforeStdinEnds(stdin, () => serving.checkBeforeLeaving()) }),
    log,
    ...(await lifecycleOptions(ctx.config.lifecycle, log)),
    // Replies a client alive never read must not hold the exit past teardown (§2.1).
    unwritten: () => protocolOut.writableLength + process.stdout.writableLength,
  });
  // Owned from the start: every way out closes it, whenever it comes to be (watching.ts).
  lifecycle.ownWatcher(serving.watching);
  const createServer = (gate: HandlerGate = lifecycle.gate) => serving.createServer(gate);
  const record = recordProcess(hostFacts(ctx.env), {
    role: transport.role,
    index: ctx.indexPath,
    ppid: STARTUP_PPID,
    version: packageVersion(),
  });
  void lifecycle.done.then(() => record.remove());
  serving.onDamaged(leaveDamaged(lifecycle, log));
  serving.checkAfterHandshake(protocolOut);

  let connected: OpenTransport;
  try {
    const watch = () => serving.watching.report();
    connected = await transport.open({ createServer, lifecycle, protocolOut, log, failpoints, store, record, watch });
  } catch (error) {
    record.remove();
    await serving.watching.close();
    await store.close();
    throw error;
  }
  lifecycle.start({
    closeTransport: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      await connected.close();
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      await connected.release?.();
      await store.close();
    },
  });
  leaveOnFatalErrors(lifecycle, log);
  // After start: the server answers while the watcher loads, catches up and starts (§3), once
  // the index is known sound (after the deferred check, if there is one).
  serving.startWatching();
  return lifecycle;
}

/**
 * A failure nobody caught is a bug: say so on stderr and leave through the machine (exit 1),
 * rather than dying with the index open.
 */
export function leaveOnFatalErrors(lifecycle: { shutdown(reason?: string): unknown }, log: Log): void {
  const fatal = (kind: string) => (error: unknown) => {
    log.warn(`${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
    void lifecycle.shutdown(kind);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
}

/** `stdin` as the lifecycle watches it, with `first` run before each listener of its end or close. */
function beforeStdinEnds(stdin: StdinSource, first: () => void): StdinSource {
  const wrapped = new Map<() => void, () => void>();
  return {
    on(event, listener) {
      const before = (): void => {
        first();
        listener();
      };
      wrapped.set(listener, before);
      return stdin.on(event, before);
    },
    off(event, listener) {
      return stdin.off(event, wrapped.get(listener) ?? listener);
    },
    get readableEnded() {
      return stdin.readableEnded;
    },
    get destroyed() {
      return stdin.destroyed;
    },
  };
}
