import type { ServerResponse } from 'node:http';
import type { Reader } from '../../core/reader-types.js';
import { isQmdError, type QmdErrorCode } from '../../errors.js';
import type { Failpoints } from '../../failpoints.js';
import type { Log } from '../../log.js';
import type { WatchStatus } from '../deps.js';
import { queryArguments, toStoreQuery } from '../query-args.js';
import { queryStructured } from '../query-reply.js';
import { documentUri } from '../refs.js';
import { describeFailure, throwIfAborted } from '../run.js';
import { withCatchingUp } from '../watch-status.js';
import { replyJson } from './reply.js';

/**
 * `POST /query` and `POST /search` on `qmd mcp --http`: the `query` tool without
 * MCP, for scripts and for clients written against qmd 2.8's REST endpoints. Both paths are
 * the same search, as in qmd 2.8 (`/search` is its alias): the body is the `query` tool's
 * arguments (qmd 2.8 requires `searches`; a plain `query` is also taken here), checked as
 * strictly; the reply is the tool's `structuredContent`, with each result's `file` the
 * document's `qmd://` URI, as qmd 2.8's REST gives it (`qmd://notes/a.md`; the `query` tool's
 * `file` is `notes/a.md`, as qmd 2.8's tool gives it), and `uri` the same URI. Errors are
 * `{ "error": "one line" }`: 400 for a bad request, 503 when the server is shutting down or
 * the request was cancelled, 500 for a damaged or locked index.
 *
 * The app routes here after the same guards as `/mcp` (Host/Origin, body cap, 503 while
 * stopping) and runs each request as one unit of the lifecycle's gate, so the drain waits
 * for its reply; `abandon` answers what the drain left. The `tool.query` failpoint holds it
 * as it holds the tool.
 */
export const REST_PATHS: ReadonlySet<string> = new Set(['/query', '/search']);

export interface RestHandler {
  /** Answers one request whose JSON body the app has read; never rejects. */
  handle(res: ServerResponse, body: unknown, signal: AbortSignal): Promise<void>;
  /** After the drain: a 503 for every request still being worked on. */
  abandon(reason: string): void;
}

const statusOf: Partial<Record<QmdErrorCode, number>> = {
  BAD_ARGUMENT: 400,
  UNKNOWN_COLLECTION: 400,
  // A `folder` that could leave the collections (`folder.ts`): the request's fault, not ours.
  OUTSIDE_COLLECTIONS: 400,
  ABORTED: 503,
  CLOSED: 503,
};

export function createRestHandler(deps: {
  store: Reader;
  failpoints: Failpoints;
  log: Log;
  /** How the index is kept fresh: a search says when vectors are still catching up. */
  watch?: () => WatchStatus;
}): RestHandler {
  const working = new Set<ServerResponse>();
  const reply = (res: ServerResponse, status: number, value: unknown): void => {
    if (!res.headersSent && !res.writableEnded) replyJson(res, status, value);
  };

  return {
    async handle(res, body, signal) {
      const parsed = queryArguments.safeParse(body ?? {});
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) =>
          i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message,
        );
        reply(res, 400, { error: `Invalid request: ${issues.join(', ')}` });
        return;
      }
      working.add(res);
      try {
        const pending = deps.failpoints.hit('tool.query', signal);
        if (pending !== undefined) await pending;
        throwIfAborted(signal);
        const { input, options } = toStoreQuery(parsed.data, signal);
        const found = await deps.store.query(input, options);
        const structured = queryStructured(withCatchingUp(found, deps.watch?.().vectorsPending ?? 0));
        reply(res, 200, {
          ...structured,
          results: structured.results.map((r) => ({ ...r, file: documentUri(r.file), uri: documentUri(r.file) })),
        });
      } catch (error) {
        const message = describeFailure(error, signal, deps.log, 'http: POST query');
        const code = signal.aborted ? 'ABORTED' : isQmdError(error) ? error.code : undefined;
        reply(res, (code && statusOf[code]) ?? 500, { error: message });
      } finally {
        working.delete(res);
      }
    },

    abandon(reason) {
      for (const res of working) reply(res, 503, { error: reason });
    },
  };
}
