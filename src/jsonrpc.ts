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

export function jsonRpcError(code: number, message: string, id: string | number | null = null): JsonRpcErrorEnvelope {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
