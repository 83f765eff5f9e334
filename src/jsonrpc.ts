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
/** Streamable HTTP's "Session not found" for an unknown `Mcp-Session-Id` (with 404), as the SDK's transport answers. */
export const JSONRPC_SESSION_NOT_FOUND = -32001;

export function jsonRpcError(code: number, message: string, id: string | number | null = null): JsonRpcErrorEnvelope {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
