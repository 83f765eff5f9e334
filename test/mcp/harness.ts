import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type CallToolResult, Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { McpServer } from '@modelcontextprotocol/server';
import { openStore } from '../../src/core/index.js';
import type { Store, StoreOptions } from '../../src/core/types.js';
import { parseFailpoints } from '../../src/failpoints.js';
import type { InflightGate } from '../../src/lifecycle/gate.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { probedGate } from '../support/gate-probe.js';
import { type RecordingLog, recordingLog } from '../support/recording-log.js';

/** 40 lines for `get` to slice; it says WAL four times to `pools.md`'s once, at a similar length. */
const sqliteNote = [
  '# SQLite tuning',
  '',
  'Use WAL mode so readers never block the writer.',
  ...Array.from({ length: 36 }, (_, i) => `Line ${i + 4}: filler about pages and checkpoints.`),
  'WAL checkpoints keep the -wal file small; a busy timeout avoids SQLITE_BUSY under WAL.',
].join('\n');

/**
 * Relative to the temp dir; `notes/` and `journal/` become collections, `secret.md` does not,
 * and `notes/link.md` is a symlink to it (never indexed: it leaves the collection).
 */
export const corpus: Record<string, string> = {
  'notes/sqlite.md': sqliteNote,
  'notes/pools.md': [
    '# Connection pools',
    '',
    'A pool hands out connections; size it to the WAL writer.',
    ...Array.from({ length: 30 }, (_, i) => `Pool note ${i}: leases, idle timeouts and health checks.`),
  ].join('\n'),
  'notes/deep/nested.md': '# Nested note\n\nAardvark migration patterns live here.\n',
  'notes/with space.md': '# Spaced name\n\nQuokka sightings, recorded weekly.\n',
  'journal/2025-05-01.md': '# May first\n\nPlanted tomatoes and basil.\n',
  'journal/2025-05-02.md': '# May second\n\nWatered the tomatoes; basil sprouted.\n',
  'journal/2025-06-01.md': '# June first\n\nHarvested basil for pesto.\n',
  'secret.md': '# Secret\n\nzebrafish password hunter2\n',
};

export interface Harness {
  dir: string;
  store: Store;
  gate: InflightGate;
  server: McpServer;
  client: Client;
  log: RecordingLog;
  /** Counts `handler.started`: resolves the next waiter each time a handler enters the gate. */
  nextStart(): Promise<void>;
  /** Counts `handler.settled`: resolves the next waiter each time a handler leaves the gate. */
  nextSettle(): Promise<void>;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** A `QMD_FAILPOINTS` spec, e.g. `tool.query=delay(600000)`. */
  failpoints?: string;
  /** For the store, e.g. `{ embedModel: tinyModelPath(), embedThreads: 1 }`. */
  store?: StoreOptions;
  /** Run `store.embed()` before the server starts (needs `store.embedModel`). */
  embed?: boolean;
  /** `qmd context add PATH TEXT` for each entry, before the server starts (its instructions). */
  contexts?: Record<string, string>;
}

/** A real store on a temp SQLite file, a real gate, and a real SDK client over memory. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'qmd-mcp-'));
  for (const [file, text] of Object.entries(corpus)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  await symlink(join(dir, 'secret.md'), join(dir, 'notes', 'link.md'));
  const store = await openStore(join(dir, 'index.sqlite'), options.store);
  await store.addCollection(join(dir, 'notes'), { name: 'notes' });
  await store.addCollection(join(dir, 'journal'), { name: 'journal' });
  if (options.embed) await store.embed();
  for (const [path, text] of Object.entries(options.contexts ?? {})) store.setContext(path, text);

  const { gate, nextStart, nextSettle } = probedGate();
  const log = recordingLog();
  const server = createMcpServer({
    store,
    gate,
    failpoints: parseFailpoints(options.failpoints),
    log,
    version: '0.0.0-test',
  });
  const client = new Client({ name: 'qmd-test', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  // Listing caches each tool's outputSchema in the client, which then validates every
  // structuredContent it receives against it (SDK 2.4.0's client): replies are checked on arrival.
  await client.listTools();

  return {
    dir,
    store,
    gate,
    server,
    client,
    log,
    nextStart,
    nextSettle,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    async close() {
      await client.close().catch(() => {});
      await server.close().catch(() => {});
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The text of every text block and embedded document, joined: what a model would read. */
export function textOf(result: CallToolResult): string {
  return result.content
    .flatMap((block) => {
      if (block.type === 'text') return [block.text];
      // An embedded document (get, multi_get): a model reads its text too.
      if (block.type === 'resource' && 'text' in block.resource) return [block.resource.text];
      return [];
    })
    .join('\n');
}
