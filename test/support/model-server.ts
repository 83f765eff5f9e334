/**
 * A local stand-in for Hugging Face: an HTTP server on 127.0.0.1 that serves model files at
 * the paths an `hf:` URI resolves to (`/<user>/<repo>/resolve/main/<file>`), so the download
 * path runs for real (node-llama-cpp's downloader, ipull) with nothing from the Internet.
 * Point `HF_ENDPOINT` at `endpoint`. It answers what node-llama-cpp 3.21.1 asks
 * (`bench/experiments/model-download/serve-gguf.ts`): a GET, then a GET with a byte range; and
 * HEAD `/` for qmd's reachability check. Anything else is 404.
 */
import { createServer, type Server } from 'node:http';

export interface ModelServer {
  /** `http://127.0.0.1:PORT/`: the value for `HF_ENDPOINT`. */
  endpoint: string;
  /** `METHOD path` of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface ModelServerOptions {
  /**
   * Each body stops after this many bytes until `until` settles, then sends the rest: a
   * download caught in the middle, for as long as a test needs to look at it, with no timer.
   */
  hold?: { afterBytes: number; until: Promise<void> };
}

/** Serves `files` (URL path, without the query, → content). */
export async function startModelServer(
  files: Record<string, Buffer>,
  options: ModelServerOptions = {},
): Promise<ModelServer> {
  const requests: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(`${req.method} ${path}`);
    const body = files[path];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] ? Number(range[2]) : body.length - 1;
    res.writeHead(range ? 206 : 200, {
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

/** Where the default model's `hf:` URI resolves on a Hugging Face host. */
export const DEFAULT_MODEL_PATH = '/ggml-org/embeddinggemma-300M-GGUF/resolve/main/embeddinggemma-300M-Q8_0.gguf';
/** The name node-llama-cpp gives the default model in the models folder (the peer's cache has it too). */
export const DEFAULT_MODEL_FILE = 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf';
