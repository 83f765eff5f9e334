import type { Duplex } from 'node:stream';
import { errorMessage } from '../errors.js';
import { describeDropped, JSONRPC_INVALID_REQUEST, JSONRPC_SERVER_ERROR, MAX_WAITING_REQUESTS } from '../jsonrpc.js';
import { createLineReader } from '../lines.js';
import { asRelayNotice } from './greeting.js';
import { type Rejoiner, rejoiner, type SilenceWatch, silenceWatch } from './heal.js';
import { codeOf, keyOf, Ledger, type Message, parse } from './ledger.js';
import { ClientWriter, ServerQueue } from './outbound.js';
import {
  MAX_RELAY_LINE_BYTES,
  MAX_SERVER_LINE_BYTES,
  type OpenHint,
  type Relay,
  type RelayOptions,
  type Upstream,
} from './relay-api.js';
import { MAX_SENDS } from './replayable.js';

export type { OpenHint, Relay, RelayOptions, Upstream };

/** Warnings for dropped server lines (and for replies to no request): the first few say what; the rest are only counted. */
const MAX_DROP_WARNINGS = 3;

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
 *   servers died under `MAX_SENDS` times, gets an error;
 * - only replies to requests this client sent and that are still owed reach it: a reply to an
 *   id never sent, or a second reply to one, is dropped and logged (whatever holds the socket);
 * - stdin is read to its end whatever the server does: requests wait here for a server (none
 *   yet, or its socket backed up), up to `maxWaiting`; past that each is refused at once;
 * - it heals (`heal.ts`): serving alone, it keeps trying to rejoin a shared server and moves
 *   back when one answers (what the local server still owes is sent to it again); a shared
 *   server silent while replies are owed, that does not answer its control socket either, is
 *   left for another (the requests moved, as when it dies).
 * Nothing here parses more than it must: lines are forwarded as they came.
 */
export function createRelay(options: RelayOptions): Relay {
  const { stdin, stdout, gate, log } = options;
  const maxWaiting = options.maxWaiting ?? MAX_WAITING_REQUESTS;
  /** Requests owed a reply, in the order the client sent them. */
  const inflight = new Ledger(gate);
  /** Requests the last server never answered, to send to the next one first. */
  let replays: string[] = [];
  const swallow = new Set<string>();
  const opening: { request: Message | null; initialized: string | null; answered: boolean } = {
    request: null,
    initialized: null,
    answered: false,
  };
  let upstream: Upstream | null = null;
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
  let warnedRefusing = false;
  let connecting = new AbortController();
  let watch: SilenceWatch | undefined;
  let rejoin: Rejoiner | undefined;
  /** The server judged hung: `open` is told not to wait on it again. */
  let hung: Upstream | undefined;
  /** The last server found hung: rejoin attempts do not wait on its socket again either. */
  let lastHung: Upstream | undefined;

  const settle = (key: string): void => inflight.settle(key);
  const stream = (): Duplex | null => upstream?.stream ?? null;
  const client = new ClientWriter(stdout, inflight, stream);
  const toClient = (line: string, key?: string): void => client.write(line, key);
  const queue = new ServerQueue(inflight, stream, () => watch?.heard());

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
    const full = queue.full(line.length, maxWaiting);
    if (message?.method === 'notifications/cancelled') inflight.cancel(keyOf(message.params?.requestId));
    let key: string | undefined;
    if (message && typeof message.method === 'string') {
      if (message.id !== undefined) {
        if (message.method === 'initialize' || message.method === 'server/discover') {
          opening.request = message;
          opening.answered = false;
          if (message.method === 'initialize') options.onOpening?.(message.params?.clientInfo);
        }
        key = inflight.track(message as Message & { method: string }, line);
        if (full) {
          if (!warnedRefusing) {
            warnedRefusing = true;
            log.warn(
              `${maxWaiting} requests wait for the shared server: the client's further requests are refused until some are sent`,
            );
          }
          client.refuse(key, 'busy');
          return;
        }
      } else if (message.method === 'notifications/initialized') {
        opening.initialized = line;
      }
    }
    // A full queue keeps requests only: a notification past it is dropped (a cancel was applied above).
    if (full && key === undefined) return;
    queue.send(line, key);
  };

  /** A line from the server that is not for the client: warned about, the first few. */
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
    const isResponse = message.method === undefined && message.id !== undefined;
    if (isResponse) {
      const key = keyOf(message.id);
      if (swallow.delete(key)) return;
      const verdict = inflight.reply(key);
      // Cancelled by the client while the reply was on its way: the client expects none.
      if (verdict === 'cancelled') return;
      if (verdict !== 'forward') {
        drop(
          verdict === 'second' ? `a second reply to id ${key}` : `a reply to id ${key}, which this client never sent`,
        );
        return;
      }
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

  /** Leaves the current upstream: its lines, its watch and its rejoin attempts are no longer heard. */
  const detach = (): void => {
    upstream = null;
    queue.unblock();
    watch?.stop();
    watch = undefined;
    rejoin?.stop();
  };

  /**
   * The server is gone with requests it never answered: those safe to repeat are kept, in
   * order, for the next server; the others are answered with an error. Then a new server,
   * unless the client is leaving and nothing is left to deliver.
   */
  const lost = (): void => {
    detach();
    if (stopped !== null) {
      // Stopped with its clients: nothing is sent again, and no server started.
      for (const key of inflight.keys()) answerLost(key, `qmd: ${stopped}`);
      queue.clear();
      return;
    }
    replays = [];
    for (const [key, owed] of inflight.entries()) {
      // Never sent (it waits in the queue), or answered already (its reply on its way): not sent again.
      if (owed.sends === 0 || owed.answered) continue;
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
      inflight.settleAll();
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
      onLine: (line) => {
        // A server this relay has left (it moved back to a shared one, or judged this one hung):
        // whatever it still says is for nobody.
        if (upstream === next) fromServer(line);
      },
      // Each one is at least the cap long: warned about, every time.
      onOversized: (bytes) =>
        log.warn(`dropped a line of ${bytes} bytes from the shared server (the limit is ${maxServerLine})`),
    });
    next.stream.on('data', (chunk: Buffer) => {
      if (upstream === next) watch?.heard();
      readServer(chunk);
    });
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
    queue.first(replays);
    replays = [];
    queue.flush();
    if (closing) next.stream.end();
    else if (next.kind === 'local') startRejoining();
    else if (options.probe !== undefined) watchSilence(next);
  };

  /** Replies owed by the current server: sent to it, not answered yet. */
  const owedByServer = (): boolean => inflight.owesAny();

  const watchSilence = (server: Upstream): void => {
    const probe = options.probe!;
    watch = silenceWatch({
      ...(options.silenceMs !== undefined && { silenceMs: options.silenceMs }),
      ...(options.timers !== undefined && { timers: options.timers }),
      waiting: owedByServer,
      probe: () => probe(server),
      onHung: () => {
        if (upstream !== server || closing) return;
        const owed = inflight.unanswered().length;
        log.warn(
          `the shared server${server.pid === undefined ? '' : ` (pid ${server.pid})`} has said nothing for ${options.silenceMs ?? 'a while'} ms and does not answer: moving this client's ${owed} request(s) to another server`,
        );
        hung = server;
        // Its close is our `lost()`: the requests move as when a server dies.
        server.stream.destroy();
        void server.release();
      },
    });
  };

  const startRejoining = (): void => {
    if (options.rejoin === undefined || closing) return;
    const tryRejoin = options.rejoin;
    rejoin ??= rejoiner({
      ...(options.rejoinMs !== undefined && { firstMs: options.rejoinMs }),
      ...(options.timers !== undefined && { timers: options.timers }),
      attempt: async () => {
        const local = upstream;
        if (local === null || local.kind !== 'local' || closing) return 'joined';
        // A request that must not be sent twice waits for its reply here first.
        if (inflight.unanswered().some((o) => !o.replayable)) return 'later';
        const next = await tryRejoin(connecting.signal, lastHung === undefined ? {} : { hung: lastHung });
        if (next === null) return 'none';
        if (next === 'soon') return 'later';
        if (upstream !== local || closing || inflight.unanswered().some((o) => !o.replayable)) {
          void next.release();
          return upstream !== local || closing ? 'joined' : 'later';
        }
        moveTo(next, local);
        return 'joined';
      },
    });
    rejoin.start();
  };

  /** From the local server back to a shared one: what the local one still owes goes with the client. */
  const moveTo = (next: Upstream, local: Upstream): void => {
    detach();
    replays = [];
    for (const [key, owed] of inflight.entries()) {
      if (owed.sends === 0 || owed.answered) continue;
      // Moving is no server dying under it: it does not count toward `MAX_SENDS`.
      owed.sends--;
      replays.push(key);
    }
    log.line(
      `rejoined the shared server${next.pid === undefined ? '' : ` (pid ${next.pid})`}${replays.length > 0 ? `; ${replays.length} request(s) sent to it again` : ''}`,
    );
    attach(next);
    void local.release().catch((error: unknown) => log.warn(`closing the local server: ${errorMessage(error)}`));
  };

  const connect = (): void => {
    const hint: OpenHint = hung === undefined ? {} : { hung };
    lastHung = hung ?? lastHung;
    hung = undefined;
    options
      .open(connecting.signal, hint)
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
    queue.clear();
    replays = [];
    for (const key of inflight.keys()) {
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
      rejoin?.stop();
      stdin.off('data', onStdinData);
      stdin.pause();
      if (upstream) upstream.stream.end();
      // Still connecting: the replies owed wait for the server (the drain bounds the wait);
      // with none owed there is nothing to connect for.
      else if (inflight.size === 0 && queue.length === 0) connecting.abort();
    },
    async release() {
      connecting.abort();
      connecting = new AbortController();
      watch?.stop();
      rejoin?.stop();
      // The drain is over: requests never sent to a server are answered; what the client did not
      // take, or was never answered, is dropped. Owed requests whose reply is written but not
      // taken are counted once, as replies.
      for (const key of queue.keys()) if (inflight.has(key)) client.refuse(key, 'closing');
      // A write the pipe took at once hears so on the next turn: count only what is still waiting.
      await new Promise((resolve) => setImmediate(resolve));
      const unanswered = Math.max(0, inflight.size - client.unflushed) + client.uncounted;
      const dropped = describeDropped(client.unflushed, client.backlog, unanswered);
      if (!client.failed && dropped !== undefined) log.warn(dropped);
      queue.clear();
      replays = [];
      const last = upstream;
      upstream = null;
      inflight.settleAll();
      if (last) await last.release();
    },
  };
}
