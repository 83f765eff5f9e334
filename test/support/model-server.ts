/**
 * A local stand-in for Hugging Face: an HTTP server on 127.0.0.1 that serves model files at
 * the paths an `hf:` URI resolves to (`/<user>/<repo>/resolve/main/<file>`), so the download
 * path runs for real with nothing from the Internet. Point `HF_ENDPOINT` at `endpoint`. It
 * answers a GET, a GET with a byte range (a resumed download), HEAD `/` (qmd's reachability
 * check); anything else is 404.
 *
 * Besides a plain file (a `Buffer`), a path can answer as the real hub and the hosts in
 * between do (`HubAnswer`):
 * - `hub`: as huggingface.co answers an LFS file: `302` to its CDN with `X-Linked-Size`,
 *   `X-Linked-Etag` (the SHA-256, quoted) and `ETag`, the CDN then serving the bytes with a
 *   Content-Length and ranges (huggingface_hub's `get_hf_file_metadata` reads the same
 *   headers); `tamper` flips one byte of what the CDN sends;
 * - `html`: `200 text/html`, a proxy's or captive portal's login page in place of the file;
 * - `short`: the first bytes of the file, no Content-Length, then the connection closes (a
 *   body delimited by the close, so the client cannot tell it was cut short but by its content);
 * - `stall`: a Content-Length for the whole file, the first bytes, then nothing, socket open;
 * - `loop`: a redirect to itself, for ever.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ModelServer {
  /** `http://127.0.0.1:PORT/`: the value for `HF_ENDPOINT`. */
  endpoint: string;
  /** `METHOD path` of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

export type HubAnswer =
  | { hub: Buffer; tamper?: boolean }
  | { html: string }
  | { short: Buffer; bytes: number }
  | { stall: Buffer; afterBytes: number }
  | { loop: true };

export interface ModelServerOptions {
  /**
   * Each body stops after this many bytes until `until` settles, then sends the rest: a
   * download caught in the middle, for as long as a test needs to look at it, with no timer.
   */
  hold?: { afterBytes: number; until: Promise<void> };
}

/** Serves `files` (URL path, without the query, → content or a `HubAnswer`). */
export async function startModelServer(
  files: Record<string, Buffer | HubAnswer>,
  options: ModelServerOptions = {},
): Promise<ModelServer> {
  const requests: string[] = [];
  const cdn = new Map<string, { body: Buffer; tamper: boolean }>();
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(`${req.method} ${path}`);
    const answer = files[path];
    const stored = cdn.get(path);
    if (stored !== undefined) return serveBytes(req, res, stored.tamper ? tampered(stored.body) : stored.body, options);
    if (answer === undefined) return void res.writeHead(404).end();
    if (Buffer.isBuffer(answer)) return serveBytes(req, res, answer, options);
    if ('hub' in answer) {
      const sha = createHash('sha256').update(answer.hub).digest('hex');
      const location = `/cdn/${sha}`;
      cdn.set(location, { body: answer.hub, tamper: answer.tamper === true });
      res.writeHead(302, {
        location,
        'x-linked-size': answer.hub.length,
        'x-linked-etag': `"${sha}"`,
        etag: `"${sha}"`,
        'content-length': 0,
      });
      return void res.end();
    }
    if ('html' in answer) {
      const page = Buffer.from(answer.html);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length });
      return void res.end(page);
    }
    if ('short' in answer) {
      // By hand: Node's server would send a chunked body, whose end the client can tell from a cut.
      req.socket.end(
        Buffer.concat([
          Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nconnection: close\r\n\r\n'),
          answer.short.subarray(0, answer.bytes),
        ]),
      );
      return;
    }
    if ('stall' in answer) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.stall.length });
      res.write(answer.stall.subarray(0, answer.afterBytes));
      return; // and nothing more, until the client gives up or the server closes
    }
    res.writeHead(302, { location: path, 'content-length': 0 });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serveBytes(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  options: ModelServerOptions,
): Promise<void> {
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  const end = range?.[2] ? Number(range[2]) : body.length - 1;
  if (start >= body.length) {
    res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
    return;
  }
  res.writeHead(range ? 206 : 200, {
    'content-type': 'application/octet-stream',
    'content-length': end - start + 1,
    'accept-ranges': 'bytes',
    ...(range && { 'content-range': `bytes ${start}-${end}/${body.length}` }),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const hold = options.hold;
  if (hold !== undefined && start < hold.afterBytes && hold.afterBytes <= end) {
    res.write(body.subarray(start, hold.afterBytes));
    await hold.until;
    if (res.destroyed) return;
    res.end(body.subarray(hold.afterBytes, end + 1));
    return;
  }
  res.end(body.subarray(start, end + 1));
}

/** The same bytes with one flipped past the header: a file damaged on the way, of the right size. */
function tampered(body: Buffer): Buffer {
  const copy = Buffer.from(body);
  const at = copy.length - 1;
  copy[at] = (copy[at] ?? 0) ^ 0xff;
  return copy;
}

/** Where the default model's `hf:` URI resolves on a Hugging Face host. */
export const DEFAULT_MODEL_PATH = '/ggml-org/embeddinggemma-300M-GGUF/resolve/main/embeddinggemma-300M-Q8_0.gguf';
/** The name node-llama-cpp gives the default model in the models folder (the peer's cache has it too). */
export const DEFAULT_MODEL_FILE = 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf';
