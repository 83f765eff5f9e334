import { relative } from 'node:path';
import { floorServer, NOT_AVAILABLE, peerServer, type QmdFixture, qmdServer, sdkServer } from './fixture.js';
import type { Contender } from './interleave.js';
import { ROOT } from './paths.js';
import { PEER_DIR, PEER_VERSION } from './peer.js';
import { RpcChild, type ServerCommand } from './rpc-child.js';

/** A server contender of the spawned benchmarks: how to start it and what to do before measuring. */
export interface ServerContender extends Contender {
  server: ServerCommand;
  /** A `query` tool call made after `initialize` (qmd only). */
  query?: string;
}

export const FLOOR = 'floor (bare node)';
export const SDK = 'bare SDK server';
export const QMD_IDLE = 'qmd mcp, idle';
export const QMD_QUERIED = 'qmd mcp, after a query';
export const QMD_WARM = 'qmd mcp, warm model';
export const QMD_MODEL = 'qmd mcp, model configured';
export const PEER = `peer (qmd ${PEER_VERSION}), idle`;
export const QMD_NO_CACHE = 'qmd mcp, idle, no compile cache';

export type ContenderKind =
  | typeof FLOOR
  | typeof SDK
  | typeof QMD_IDLE
  | typeof QMD_QUERIED
  | typeof QMD_WARM
  | typeof QMD_MODEL
  | typeof PEER
  | typeof QMD_NO_CACHE;

/**
 * The contenders by name. The warm-model one runs a query on the embedded index with the tiny
 * model (the query embeds, so the model is loaded and has run); "model configured" only
 * points `QMD_EMBED_MODEL` at it (lazy loading should keep start-up where it was).
 */
/** A note for the results on the peer: what ran, or why it did not. */
export function peerNote(fixture: QmdFixture): string[] {
  if ('skip' in fixture.peer) return [`Peer (qmd ${PEER_VERSION}): ${fixture.peer.skip}.`];
  return [
    `Peer: qmd ${PEER_VERSION} from npm (${relative(ROOT, PEER_DIR)}, installed for ${process.version}), on the same notes indexed by its own \`collection add\`, in a home of its own; its \`bin\` is a launcher that re-spawns node, so its times include that second start.`,
  ];
}

/** A note for the results when the warm-model contenders could not run, and why. */
export function embeddingNote(fixture: QmdFixture): string[] {
  if ('skip' in fixture.embedded) return [`Warm-model contenders: ${NOT_AVAILABLE} (${fixture.embedded.skip}).`];
  return [
    `Warm-model contenders: the tiny test model (random weights, ~400 KB) via QMD_EMBED_MODEL, on a ${fixture.embedded.notes}-note embedded index.`,
  ];
}

export function serverContenders(fixture: QmdFixture, kinds: readonly ContenderKind[]): ServerContender[] {
  const embedded = 'skip' in fixture.embedded ? undefined : fixture.embedded;
  const noModel = NOT_AVAILABLE;
  const placeholder = qmdServer(fixture.index);
  return kinds.map((name): ServerContender => {
    switch (name) {
      case FLOOR:
        return { name, server: floorServer() };
      case SDK:
        return { name, server: sdkServer() };
      case QMD_IDLE:
        return { name, server: qmdServer(fixture.index) };
      case QMD_QUERIED:
        return { name, server: qmdServer(fixture.index), query: fixture.query };
      case QMD_WARM:
        return embedded
          ? { name, server: qmdServer(embedded.index, { QMD_EMBED_MODEL: embedded.model }), query: fixture.query }
          : { name, server: placeholder, skip: noModel };
      case QMD_MODEL:
        // The same index as "idle", with a model configured: only lazy loading keeps them equal.
        return embedded
          ? { name, server: qmdServer(fixture.index, { QMD_EMBED_MODEL: embedded.model }) }
          : { name, server: placeholder, skip: noModel };
      case QMD_NO_CACHE:
        // Node's switch, which qmd honours for its own cache too (src/cli/fast-path.ts): the ES
        // modules, nothing cached, as a first start after an install or an upgrade costs.
        return { name, server: qmdServer(fixture.index, { NODE_DISABLE_COMPILE_CACHE: '1' }) };
      case PEER:
        return 'skip' in fixture.peer
          ? { name, server: placeholder, skip: fixture.peer.skip }
          : { name, server: peerServer(fixture.peer.env) };
    }
    throw new Error(`unknown contender ${name}`);
  });
}

/** Spawns the contender, does the handshake and its query: a server in the state to measure. */
export async function startSession(contender: ServerContender): Promise<RpcChild> {
  const peer = new RpcChild(contender.server);
  try {
    await peer.initialize();
    if (contender.query !== undefined) await peer.callTool('query', { query: contender.query });
    return peer;
  } catch (error) {
    peer.kill();
    throw error;
  }
}

/** How a process ended, for the tables: `0`, `1`, `SIGTERM`… */
export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ?? String(exit.code);
}

/** Counts of each value, rendered "0×20, SIGTERM×2". */
export function tally(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v}×${n}`).join(', ') || '—';
}
