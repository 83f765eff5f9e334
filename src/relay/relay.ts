import type { Duplex } from 'node:stream';
import { errorMessage } from '../errors.js';
import { describeDropped, JSONRPC_INVALID_REQUEST, JSONRPC_SERVER_ERROR } from '../jsonrpc.js';
import { createLineReader } from '../lines.js';
import { asRelayNotice } from './greeting.js';
import type { Relay, RelayOptions, Upstream } from './relay-api.js';
import { isReplayable, MAX_SENDS } from './replayable.js';

export type { Relay, RelayOptions, Upstream } from './relay-api.js';

export const MAX_RELAY_LINE_BYTES = 8 * 1024 * 1024;
/** Requests read from the client while no server is connected yet; stdin pauses past this. */
const MAX_QUEUED_LINES = 256;
/**
 * A server line is capped as a client line is (dropped up to its newline, with a warning), but
 * higher: a legitimate reply can be long. `get` returns a whole note (up to 10 MiB are indexed,
 * `src/indexing/scan.ts`), JSON-escaped and with line numbers if asked; `multi_get` up to 8 MiB
 * of notes. Past this, a line is not a reply from a qmd server, and buffering it would let
 * whatever holds the socket grow the relay without bound.
 */
export const MAX_SERVER_LINE_BYTES = 64 * 1024 * 1024;
/** Warnings for dropped server lines: the first few say what; the rest are only counted. */
const MAX_DROP_WARNINGS = 3;

interface Message {
  id?: unknown;
  method?: unknown;
  params?: { requestId?: unknown; name?: unknown };
  result?: unknown;
  error?: unknown;
}

function parse(line: string): Message | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Message) : null;
  } catch {
    return null;
  }
}

/** A request owed a reply. */
interface Owed {
  /** Settles its unit of the gate. */
  done: () => void;
  /** As the client wrote it: what a new server is sent if the old one never answered. */
  line: string;
  method: string;
  /** Safe to send twice (`replayable.ts`). */
  replayable: boolean;
  /** Servers it was written to. */
  sends: number;
}

const keyOf = (id: unknown): string => JSON.stringify(id);

/** A string `code` an error carries (a QmdError's, or the start failure's a relay passes on). */
function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Relays newline-delimited JSON-RPC between one client (stdin/stdout) and the shared server,
 * and keeps what the relay's lifecycle needs to know:
 * - each request forwarded is one unit of the gate until its response (or an error) reaches
 *   the client, so the drain waits for replies already owed; a cancelled request counts as
 *   answered (the SDK never answers one);
 * - the client's opening (`initialize` and `notifications/initialized`, or `server/discover`)
 *   is kept, so that if the server goes away the relay opens a new one, replays the opening
 *   under an id of its own and swallows that reply: the client never sees a second one;
 * - each request is kept as the client wrote it until it is answered. When the server goes
 *   away, every request it never answered that is safe to repeat (`replayable.ts`: qmd's
 *   tools and every MCP read) is sent again to the new server, in the order the client sent
 *   them and under the same ids, after the opening; those written to the dead socket before
 *   its close was seen are among them. Only a request that is not safe to repeat, or that
 *   servers died under `MAX_SENDS` times, gets an error.
 * Nothing here parses more than it must: lines are forwarded as they came.
 */
export function createRelay(options: RelayOptions): Relay {
  const { stdin, stdout, gate, log } = options;
  /** Requests owed a reply, in the order the client sent them (a Map keeps insertion order). */
  const inflight = new Map<string, Owed>();
  /** Requests the last server never answered, to send to the next one first. */
  let replays: string[] = [];
  const swallow = new Set<string>();
  const opening: { request: Message | null; initialized: string | null; answered: boolean } = {
    request: null,
    initialized: null,
    answered: false,
  };
  let upstream: Upstream | null = null;
  let queue: Array<{ line: string; key?: string }> = [];
  let closing = false;
  let connections = 0;
  /** Openings replayed under the relay's own ids. */
  let reopenings = 0;
  let failed: string | null = null;
  /** Why the server told this relay to end with it (`onStopped`); no new server is started then. */
  let stopped: string | null = null;
  /** The failure's code (`INDEX_CORRUPT`, …), in each error's `data` as the server would give it. */
  let failedData: { code: string } | undefined;
  let dropped = 0;
  const connecting = new AbortController();

  const settle = (key: string): void => {
    const owed = inflight.get(key);
    if (!owed) return;
    inflight.delete(key);
    owed.done();
  };

  // Backpressure both ways, one waiter at a time: the slower side pauses the other. A client
  // that stops reading stops the relay reading the server, whose session then stops reading
  // the relay (src/mcp/stdio/connection.ts), which stops the relay reading the client.
  let waitingForClient = false;
  let waitingForServer: Duplex | null = null;
  let clientFailed = false;
  /** Replies written to the client whose write has not completed: it has not taken them. */
  let unflushed = 0;
  /** Writes one line to the client; `key`'s unit settles once it has left the process. */
  const toClient = (line: string, key?: string): void => {
    unflushed++;
    const written = stdout.write(`${line}\n`, (error) => {
      unflushed--;
      if (key !== undefined) settle(key);
      if (error && !clientFailed) {
        // Nobody reads the replies any more: nothing is owed.
        clientFailed = true;
        for (const owed of [...inflight.keys()]) settle(owed);
      }
    });
    if (written || !upstream || waitingForClient) return;
    // The client reads slower than the server answers: stop reading the server meanwhile.
    const paused = upstream.stream;
    waitingForClient = true;
    paused.pause();
    stdout.once('drain', () => {
      waitingForClient = false;
      paused.resume();
    });
  };

  const resumeClient = (): void => {
    if (!closing && waitingForServer === null && queue.length < MAX_QUEUED_LINES) stdin.resume();
  };
  const toServer = (line: string, key?: string): void => {
    if (!upstream) {
      queue.push(key === undefined ? { line } : { line, key });
      // No server yet: hold at most this many requests, the rest wait in the client's pipe.
      if (queue.length >= MAX_QUEUED_LINES) stdin.pause();
      return;
    }
    const owed = key === undefined ? undefined : inflight.get(key);
    if (owed) owed.sends++;
    if (upstream.stream.write(`${line}\n`) || waitingForServer) return;
    const stream = upstream.stream;
    waitingForServer = stream;
    stdin.pause();
    stream.once('drain', () => {
      if (waitingForServer !== stream) return;
      waitingForServer = null;
      resumeClient();
    });
  };

  const track = (message: Message & { method: string }, line: string): string => {
    const key = keyOf(message.id);
    if (inflight.has(key)) return key;
    const replayable = isReplayable(message.method, message.params);
    void gate
      .run(
        (signal) =>
          new Promise<void>((resolve) => {
            if (signal.aborted) return resolve();
            inflight.set(key, { done: resolve, line, method: message.method, replayable, sends: 0 });
            // Escalation aborts the gate: stop waiting for this reply.
            signal.addEventListener('abort', () => settle(key), { once: true });
          }),
      )
      .catch(() => {});
    return key;
  };

  const fromClient = (line: string): void => {
    const message = parse(line);
    if (failed !== null) {
      // Nothing can serve it: answer a request at once, as a server that cannot open would.
      if (message && typeof message.method === 'string' && message.id !== undefined)
        toClient(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: JSONRPC_SERVER_ERROR, message: failed, data: failedData },
          }),
        );
      return;
    }
    let key: string | undefined;
    if (message && typeof message.method === 'string') {
      if (message.id !== undefined) {
        if (message.method === 'initialize' || message.method === 'server/discover') {
          opening.request = message;
          opening.answered = false;
        }
        key = track(message as Message & { method: string }, line);
      } else if (message.method === 'notifications/initialized') {
        opening.initialized = line;
      }
    }
    toServer(line, key);
    if (message?.method === 'notifications/cancelled') settle(keyOf(message.params?.requestId));
  };

  /** A line from the server that is not JSON-RPC: warned about, the first few. */
  const drop = (what: string): void => {
    dropped++;
    if (dropped <= MAX_DROP_WARNINGS) {
      log.warn(
        `dropped ${what} from the shared server${dropped === MAX_DROP_WARNINGS ? ' (further drops are not reported)' : ''}`,
      );
    }
  };

  const fromServer = (line: string): void => {
    const message = parse(line);
    const notice = asRelayNotice(message);
    if (notice !== null) {
      stopped ??= notice.reason;
      // With a code the server found the index damaged: the client hears it as at a failed start.
      if (notice.code !== undefined) fail(`qmd: ${notice.reason}`, notice.code);
      else options.onStopped?.(notice.reason);
      return;
    }
    // Only JSON-RPC reaches the client's stdout, whatever holds the socket.
    if (message === null || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      drop(`a line that is not JSON-RPC (${line.length} chars)`);
      return;
    }
    const isResponse = message !== null && message.method === undefined && message.id !== undefined;
    if (isResponse) {
      const key = keyOf(message.id);
      if (swallow.delete(key)) return;
      if (opening.request !== null && key === keyOf(opening.request.id)) opening.answered = true;
      toClient(line, key);
      return;
    }
    toClient(line);
  };

  const readClient = createLineReader({
    maxBytes: options.maxLineBytes ?? MAX_RELAY_LINE_BYTES,
    onLine: fromClient,
    onOversized: (bytes) => {
      log.warn(`refused a request of ${bytes} bytes (the limit is ${options.maxLineBytes ?? MAX_RELAY_LINE_BYTES})`);
      toClient(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: JSONRPC_INVALID_REQUEST, message: 'Request too large' },
        }),
      );
    },
  });
  const onStdinData = (chunk: Buffer): void => readClient(chunk);

  /** Answers one request owed with an error: the server that had it is gone. */
  const answerLost = (key: string, message: string): void => {
    toClient(
      JSON.stringify({
        jsonrpc: '2.0',
        id: JSON.parse(key) as unknown,
        error: { code: JSONRPC_SERVER_ERROR, message },
      }),
    );
    settle(key);
  };

  /**
   * The server is gone with requests it never answered: those safe to repeat are kept, in
   * order, for the next server; the others are answered with an error. Then a new server,
   * unless the client is leaving and nothing is left to deliver.
   */
  const lost = (): void => {
    upstream = null;
    // A 'drain' that will never come from the old socket must not keep the client paused.
    waitingForServer = null;
    if (stopped !== null) {
      // Stopped with its clients: nothing is sent again, and no server started.
      for (const key of [...inflight.keys()]) answerLost(key, `qmd: ${stopped}`);
      queue = [];
      return;
    }
    const queued = new Set(queue.map((q) => q.key));
    replays = [];
    for (const [key, owed] of [...inflight]) {
      // Read while no server was connected: never sent, it goes with the queue.
      if (owed.sends === 0 && queued.has(key)) continue;
      if (!owed.replayable) {
        answerLost(
          key,
          `qmd: the shared server went away before answering ${owed.method}, which is not safe to send twice; please retry`,
        );
      } else if (owed.sends >= MAX_SENDS) {
        answerLost(
          key,
          `qmd: the shared server went away ${owed.sends} times while answering this request; not sent again`,
        );
      } else replays.push(key);
    }
    if (closing && replays.length === 0 && queue.length === 0) {
      for (const key of [...inflight.keys()]) settle(key);
      return;
    }
    log.warn(
      `the shared server went away; connecting to a new one${replays.length > 0 ? ` (${replays.length} request(s) to send again)` : ''}`,
    );
    connect();
  };

  const attach = (next: Upstream): void => {
    upstream = next;
    connections++;
    const maxServerLine = options.maxServerLineBytes ?? MAX_SERVER_LINE_BYTES;
    const readServer = createLineReader({
      maxBytes: maxServerLine,
      onLine: fromServer,
      // Each one is at least the cap long: warned about, every time.
      onOversized: (bytes) =>
        log.warn(`dropped a line of ${bytes} bytes from the shared server (the limit is ${maxServerLine})`),
    });
    next.stream.on('data', (chunk: Buffer) => readServer(chunk));
    // connectShared paused it after reading the server's greeting.
    next.stream.resume();
    next.stream.on('error', () => {});
    next.stream.once('close', () => {
      if (upstream === next) lost();
    });
    if (connections > 1 && opening.request && opening.answered) {
      // A new server knows nothing of this client: open it as the client did, quietly. (An
      // opening never answered is among the replays, under the client's own id.)
      const id = `qmd-relay-replay-${++reopenings}`;
      swallow.add(keyOf(id));
      next.stream.write(`${JSON.stringify({ ...opening.request, id })}\n`);
      if (opening.initialized) next.stream.write(`${opening.initialized}\n`);
    }
    // What the last server never answered, in the order the client sent it, before anything newer.
    const again = replays;
    replays = [];
    for (const key of again) {
      const owed = inflight.get(key);
      // Cancelled, or answered by escalation, meanwhile: nothing to send.
      if (owed) toServer(owed.line, key);
    }
    const waiting = queue;
    queue = [];
    for (const { line, key } of waiting) toServer(line, key);
    if (closing) next.stream.end();
    else resumeClient();
  };

  const connect = (): void => {
    options
      .open(connecting.signal)
      .then(
        (next) => {
          if (next === null) return;
          // Closing with replies owed (`printf … | qmd mcp --shared` ends stdin at once): the
          // requests read are still delivered, then the session is half-closed.
          if (closing && inflight.size === 0 && queue.length === 0 && replays.length === 0) {
            void next.release();
            return;
          }
          attach(next);
        },
        // Only `open` failing means nothing can serve this client.
        (error: unknown) => fail(`qmd: ${errorMessage(error)}`, codeOf(error)),
      )
      .catch((error: unknown) => log.warn(`relay: ${errorMessage(error)}`));
  };

  /** Nothing can serve this client: every request owed, and any to come, gets `reason`. */
  const fail = (reason: string, code?: string): void => {
    if (failed !== null) return;
    failed = reason;
    failedData = code === undefined ? undefined : { code };
    queue = [];
    replays = [];
    for (const key of [...inflight.keys()]) {
      toClient(
        JSON.stringify({
          jsonrpc: '2.0',
          id: JSON.parse(key) as unknown,
          error: { code: JSONRPC_SERVER_ERROR, message: reason, data: failedData },
        }),
      );
      settle(key);
    }
    log.line(reason);
    options.onFailed?.(reason);
  };

  return {
    get connections() {
      return connections;
    },
    start() {
      stdin.on('data', onStdinData);
      connect();
    },
    async close() {
      closing = true;
      stdin.off('data', onStdinData);
      stdin.pause();
      if (upstream) upstream.stream.end();
      // Still connecting: the replies owed wait for the server (the drain bounds the wait);
      // with none owed there is nothing to connect for.
      else if (inflight.size === 0 && queue.length === 0) connecting.abort();
    },
    async release() {
      connecting.abort();
      // The drain is over: what the client did not take, or was never answered, is dropped.
      // Owed requests whose reply is written but not taken are counted once, as replies.
      const dropped = describeDropped(unflushed, stdout.writableLength, Math.max(0, inflight.size - unflushed));
      if (!clientFailed && dropped !== undefined) log.warn(dropped);
      queue = [];
      replays = [];
      const last = upstream;
      upstream = null;
      for (const key of [...inflight.keys()]) settle(key);
      if (last) await last.release();
    },
  };
}
