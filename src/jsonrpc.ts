/**
 * JSON-RPC 2.0's error codes and envelope: a neutral leaf, so the relay (which may not import
 * src/mcp/) and the server use the same ones.
 *
 * The JSON-RPC error envelope for refusals we answer ourselves, before or outside the SDK: a
 * line too large or not JSON on stdio, a bad body or a refused request over HTTP. `id: null`
 * when the request's id is unknown, as JSON-RPC 2.0 says for parse errors.
 */
export interface JsonRpcErrorEnvelope {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
/**
 * The first of the codes JSON-RPC leaves to the server: ours for a request nothing answered
 * (the server shut down or restarted first, or nothing could serve the client), the code MCP
 * SDKs have used for a closed connection.
 */
export const JSONRPC_SERVER_ERROR = -32000;
/** A request refused for its Origin or Host (with 403), the code qmd 2.8 answers it with. */
export const JSONRPC_FORBIDDEN = -32003;
/** Streamable HTTP's "Session not found" for an unknown `Mcp-Session-Id` (with 404), as the SDK's transport answers. */
export const JSONRPC_SESSION_NOT_FOUND = -32001;

export function jsonRpcError(code: number, message: string, id: string | number | null = null): JsonRpcErrorEnvelope {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * What a connection says when its drain ended before the client took everything (a client
 * alive that stopped reading): `dropped 12 replies (240 KiB) the client did not read; 30
 * requests it sent go unanswered`. `undefined` when nothing was dropped.
 */
export function describeDropped(replies: number, bytes: number, unanswered: number): string | undefined {
  const parts: string[] = [];
  if (replies > 0)
    parts.push(
      `dropped ${replies} repl${replies === 1 ? 'y' : 'ies'} (${Math.ceil(bytes / 1024)} KiB) the client did not read`,
    );
  if (unanswered > 0)
    parts.push(
      `${unanswered} request${unanswered === 1 ? '' : 's'} ${replies > 0 ? 'it' : 'the client'} sent go unanswered`,
    );
  return parts.length === 0 ? undefined : parts.join('; ');
}

/**
 * The requests a stdio connection keeps waiting while the client sends faster than it is
 * answered (plain `qmd mcp`, a shared session, a relay): past either bound, a request is
 * refused at once (`refusedLine`) instead of read into memory without end. Reading goes on
 * whatever the client does, so its EOF is always seen (docs/design.md §2.1, the drain).
 */
export const MAX_WAITING_REQUESTS = 1024;
export const MAX_WAITING_BYTES = 16 * 1024 * 1024;

/**
 * Refusals are written only while less than this waits for the client: past it (a client
 * that reads nothing and writes without end) a refused request is only counted, and said at
 * the end (`describeDropped`). Bounds what a client can make qmd hold, whatever it sends.
 */
export const MAX_REFUSAL_BACKLOG_BYTES = 4 * 1024 * 1024;

/** The error a request gets when it is refused for `why`: one line, ready to write. */
export function refusedLine(id: string | number, why: 'busy' | 'closing'): string {
  const message =
    why === 'busy'
      ? `qmd: ${MAX_WAITING_REQUESTS} requests are already waiting; this one was not run: send it again once replies arrive`
      : 'qmd: the server is shutting down; this request was not run';
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: JSONRPC_SERVER_ERROR, message } })}\n`;
}
