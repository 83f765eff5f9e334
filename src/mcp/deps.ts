import type { Reader } from '../core/reader-types.js';
import type { Failpoints } from '../failpoints.js';
import type { HandlerGate } from '../lifecycle/gate.js';
import type { Log } from '../log.js';
import type { WatchReport } from '../watch/types.js';

/** What the server says of the watching of its index: the watcher's report, or why nothing watches. */
export interface WatchStatus extends WatchReport {
  /** Why nothing watches (role `off`): `--no-watch`, `QMD_WATCH=0`, no index yet, the engine could not be loaded, it failed. */
  off?: string;
}

/** What the MCP server is built from; `src/cli/` supplies the real ones, tests their own. */
export interface McpDeps {
  /** The index, read-only from here: query, get, multiGet, status, listCollections. */
  store: Reader;
  /** Every handler runs through it, so the lifecycle can drain and abort them. */
  gate: HandlerGate;
  failpoints: Failpoints;
  /** stderr only: stdout carries JSON-RPC. */
  log: Log;
  /** Reported as `serverInfo.version`. */
  version: string;
  /**
   * How the index is kept fresh (docs/design.md §6): `status` reports it and `query` notes
   * vectors still catching up. Absent: nothing is said of watching.
   */
  watch?: () => WatchStatus;
}
