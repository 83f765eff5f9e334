import type { ServerResponse } from 'node:http';
import { JSONRPC_SERVER_ERROR, jsonRpcError } from '../../jsonrpc.js';

/**
 * A refusal in the shape the SDK uses for its own (a JSON-RPC error with `id: null`), so a
 * client shows the same kind of message whoever refused it.
 */
export function replyError(
  res: ServerResponse,
  status: number,
  message: string,
  options: { code?: number; headers?: Record<string, string>; close?: boolean } = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(jsonRpcError(options.code ?? JSONRPC_SERVER_ERROR, message));
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...options.headers,
    // The connection may still carry bytes we will never read (an oversized body), or the
    // server is leaving: either way it must not be reused.
    ...(options.close && { Connection: 'close' }),
  });
  res.end(body);
}

export function replyJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  options: { headers?: Record<string, string>; close?: boolean } = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...options.headers,
    ...(options.close && { Connection: 'close' }),
  });
  res.end(body);
}
