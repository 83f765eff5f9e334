import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/server';
import type { CliContext } from '../cli/context.js';
import { embedStoreOptions } from '../cli/embed-model.js';
import { modelStoreOptions } from '../cli/query-models.js';
import { packageVersion } from '../cli/version.js';
import { awaitIndex } from '../core/awaiting.js';
import { openReader } from '../core/open.js';
import type { Reader } from '../core/reader-types.js';
import type { StoreOptions } from '../core/types.js';
import type { Failpoints } from '../failpoints.js';
import type { HandlerGate } from '../lifecycle/gate.js';
import { createLifecycle, type Lifecycle, type LifecycleOptions } from '../lifecycle/host.js';
import { DEFAULT_EMBED_MODEL, defaultThreads, type ModelChoice } from '../llm/index.js';
import type { Log } from '../log.js';
import { createMcpServer } from '../mcp/server.js';
import { claimStdout } from '../mcp/stdio/stdout-guard.js';
import { hostFacts } from '../relay/paths.js';
import { type RecordedProcess, recordProcess } from '../relay/process-record.js';
import { mistypedIndex } from '../store/paths.js';
import { lifecycleOptions } from './lifecycle-options.js';
import { STARTUP_PPID } from './startup.js';

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
}

/** What every root serves: one store, and an `McpServer` over it for each gate that asks. */
export interface Serving {
  store: Reader;
  createServer(gate: HandlerGate): McpServer;
}

/**
 * Opens the index read-only for serving (the model loads lazily, on the first vector query),
 * the same for stdio, HTTP, the relay's fallback and the shared server (whose `storeLog` notes
 * model loads). quick_check on a small index: a damaged one refuses to start (exit 1, one
 * line) rather than answering every request with an error; a large one is not read through at
 * every start (StoreOptions.quickCheck), its damage meets the request that touches it as
 * INDEX_CORRUPT.
 *
 * No index yet (a client configured on a fresh machine, before the first `qmd collection add`,
 * would otherwise keep a dead server until the person restarts it): the server starts and serves anyway, creating nothing; its tools say `No index yet at PATH: qmd
 * collection add DIR` until the file appears, and the first call after that opens it as above
 * (`awaitIndex`). A path named by --index or QMD_INDEX whose folder does not exist either is a
 * typo, and still fails at once (`mistypedIndex`); the default one (a fresh machine has no
 * ~/.cache/qmd) and the peer's INDEX_PATH are served.
 */
export function openServing(ctx: CliContext, options: ServingOptions = {}): Serving {
  const { log } = ctx;
  const { failpoints } = ctx.config;
  const open = () =>
    openReader(ctx.indexPath, {
      readonly: true,
      quickCheck: 'small',
      log: options.storeLog ?? log,
      failpoints,
      queryWorker: ctx.config.queryWorker,
      ...embedStoreOptions(ctx),
      ...modelStoreOptions(ctx, { query: true }),
      ...(options.createEmbedder !== undefined && { createEmbedder: options.createEmbedder }),
    });
  let store: Reader;
  if (existsSync(ctx.indexPath)) store = open();
  else {
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
    store = awaitIndex(ctx.indexPath, open, {
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
  const version = packageVersion();
  return { store, createServer: (gate) => createMcpServer({ store, gate, failpoints, log, version }) };
}

/**
 * `qmd mcp`, whatever the transport, read top to bottom: stdout is claimed for the protocol,
 * the store opens (`openServing`), the lifecycle is created, the transport connects servers
 * built with the lifecycle's gate, and the lifecycle starts with the teardown that closes
 * exactly what was built:
 * `closeTransport` = the transport's `close()`, `disposeStore` = its `release()`, then
 * `store.close()` (the LLM first, then the database). From then on the machine owns the exit.
 */
export async function serveMcp(ctx: CliContext, transport: McpTransport): Promise<Lifecycle> {
  const { log } = ctx;
  const protocolOut = claimStdout(log);
  const { failpoints } = ctx.config;
  const serving = openServing(ctx, transport.serving);
  const { store } = serving;
  const lifecycle = createLifecycle({
    ...transport.sources,
    log,
    ...(await lifecycleOptions(ctx.config.lifecycle, log)),
    // Replies a client alive never read must not hold the exit past teardown (§2.1).
    unwritten: () => protocolOut.writableLength + process.stdout.writableLength,
  });
  const createServer = (gate: HandlerGate = lifecycle.gate) => serving.createServer(gate);
  const record = recordProcess(hostFacts(ctx.env), {
    role: transport.role,
    index: ctx.indexPath,
    ppid: STARTUP_PPID,
    version: packageVersion(),
  });
  void lifecycle.done.then(() => record.remove());

  let connected: OpenTransport;
  try {
    connected = await transport.open({ createServer, lifecycle, protocolOut, log, failpoints, store, record });
  } catch (error) {
    record.remove();
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
