import type { Reader } from '../core/reader-types.js';
import type { Failpoints } from '../failpoints.js';
import type { HandlerGate } from '../lifecycle/gate.js';
import type { Log } from '../log.js';

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
}
