import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJSONRPCRequest, type RequestId } from '@modelcontextprotocol/server';
import { JSONRPC_SERVER_ERROR } from '../../jsonrpc.js';
import type { Log } from '../../log.js';
import type { LegacyLeg, LegacySession } from './legacy.js';
import { replyError } from './reply.js';

/** How long abandoned replies get to be written out; well inside the teardown step's 2 s bound. */
const ABANDON_FLUSH_MS = 250;

export interface Exchanges {
  /** Hands one HTTP exchange to its session's transport; settles when the response is closed. */
  run(session: LegacySession, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void>;
  /** After a POST that carried `notifications/cancelled`: ends the cancelled requests' streams. */
  endCancelled(session: LegacySession, body: unknown): void;
  /**
   * After the drain: answers every request still in flight with a JSON-RPC error, so its
   * client learns now that no reply is coming (closing a session discards pending replies,
   * and the SDK client would otherwise wait for its request timeout, 60 s by default).
   */
  abandon(reason: string): Promise<void>;
}

interface Pending {
  session: LegacySession;
  ids: RequestId[];
  closed: Promise<void>;
}

function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/**
 * The HTTP exchanges in flight and the three things the SDK's Node transport leaves to us
 * about them: a client that hangs up, a cancelled request, and the replies still owed
 * when the server must go.
 */
export function createExchanges(options: { legacy: LegacyLeg; log: Log; onEnded: () => void }): Exchanges {
  const { legacy, log } = options;
  const pending = new Set<Pending>();

  const cancel = (session: LegacySession, ids: RequestId[], reason: string): void => {
    for (const requestId of ids) {
      session.transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason },
      });
    }
  };

  return {
    async run(session, req, res, body) {
      let entry: Pending | undefined;
      const ids = messagesOf(body)
        .filter(isJSONRPCRequest)
        .map((m) => m.id);
      const closed = new Promise<void>((resolve) =>
        res.once('close', () => {
          // The client hung up before its reply: cancel what it asked for, as if it had said
          // so, so its handlers stop (their signals abort) instead of working for nobody.
          if (!res.writableFinished && entry && pending.has(entry)) cancel(session, ids, 'the client disconnected');
          resolve();
        }),
      );
      if (ids.length > 0) {
        entry = { session, ids, closed };
        pending.add(entry);
      }
      const stream = req.method === 'GET';
      legacy.begin(session, stream);
      try {
        await session.transport.handleRequest(req, res, body);
        await closed;
      } catch (error) {
        log.warn(`http: ${req.method} ${req.url} failed: ${(error as Error).message}`);
        replyError(res, 500, 'Internal error');
      } finally {
        if (entry) pending.delete(entry);
        legacy.end(session, stream);
        options.onEnded();
      }
    },

    /**
     * The SDK never answers a cancelled request (`Protocol` returns early once the handler's
     * signal was aborted), so the response stream of its POST stayed open until the session
     * closed, and the drain waited for it up to its deadline (measured). Once the cancellation
     * has been delivered, end that stream.
     */
    endCancelled(session, body) {
      for (const message of messagesOf(body)) {
        const m = message as { method?: unknown; params?: { requestId?: unknown } };
        const id = m.params?.requestId;
        if (m.method === 'notifications/cancelled' && (typeof id === 'string' || typeof id === 'number'))
          session.transport.closeSSEStream(id);
      }
    },

    async abandon(reason) {
      const left = [...pending];
      for (const { session, ids } of left) {
        for (const id of ids) {
          const error = { jsonrpc: '2.0' as const, id, error: { code: JSONRPC_SERVER_ERROR, message: reason } };
          // The SDK throws if this request was answered meanwhile: nothing left to do then.
          await session.transport.send(error).catch(() => {});
        }
      }
      // Let those replies reach their sockets before the connections are cut — briefly: a
      // client that stopped reading must not hold teardown.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(left.map((entry) => entry.closed)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, ABANDON_FLUSH_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
