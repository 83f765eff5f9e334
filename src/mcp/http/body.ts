import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { kind: 'ok'; value: unknown }
  | { kind: 'tooLarge'; limit: number }
  | { kind: 'invalid'; message: string };

/**
 * Reads and parses a JSON request body, refusing anything over `maxBytes` — from a declared
 * `Content-Length` before reading a byte, else as soon as the count passes the limit. We
 * parse it ourselves (the SDK takes it as `parsedBody`) because routing needs it first: only
 * an `initialize` request may create a session.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ kind: 'tooLarge', limit: maxBytes });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        // Stop buffering; the caller answers 413 and closes the connection.
        chunks.length = 0;
        finish({ kind: 'tooLarge', limit: maxBytes });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        finish({ kind: 'ok', value: JSON.parse(text) });
      } catch (error) {
        finish({ kind: 'invalid', message: `Parse error: ${(error as Error).message}` });
      }
    };
    const onError = (error: Error): void => finish({ kind: 'invalid', message: `Request body: ${error.message}` });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
