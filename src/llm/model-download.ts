/**
 * Downloads a model file from a URL we know (`model-cache.ts`), instead of node-llama-cpp's
 * downloader, which cannot be bounded: measured with 3.21.1 against a local host answering
 * 500 or 503 (`bench/experiments/model-download/host-errors.ts`), `resolveModelFile` was still
 * pending after 60 s (17 requests) and ignored its abort signal, so a sick mirror held
 * `qmd embed` for minutes and Ctrl-C could not end it. Here: one request, its error at once,
 * the signal honoured, progress from the body as it arrives, and a file that appears under its
 * name only when complete (`NAME.part` until then, resumed by the next try with a Range request).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DownloadProgress } from './model-file.js';

export interface DownloadOptions {
  signal: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /** Where `HF_TOKEN` and the Hugging Face token file are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The origin a token may be sent to (the Hugging Face endpoint); never another. */
  tokenOrigin?: string;
}

/** Downloads `url` to `file`; rejects with an Error saying what went wrong (the caller words it). */
export async function downloadModelFile(url: string, file: string, options: DownloadOptions): Promise<void> {
  const part = `${file}.part`;
  await mkdir(dirname(file), { recursive: true });
  let have = (await stat(part).catch(() => undefined))?.size ?? 0;
  let response = await request(url, have, options);
  if (response.status === 416) {
    // The part is as long as the file or longer: start again.
    await response.body?.cancel();
    have = 0;
    response = await request(url, 0, options);
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${url}`);
  }
  if (response.status === 200) have = 0; // the host ignored the range: the whole file comes
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  const total = Number.isFinite(length) ? have + length : 0;
  let done = have;
  const body = response.body;
  if (body === null) throw new Error(`no body from ${url}`);
  const { onProgress } = options;
  await pipeline(
    Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>),
    async function* count(chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        done += chunk.length;
        onProgress?.({ downloadedBytes: done, totalBytes: total });
        yield chunk;
      }
    },
    createWriteStream(part, { flags: have > 0 ? 'a' : 'w' }),
    { signal: options.signal },
  );
  const size = (await stat(part)).size;
  if (total > 0 && size !== total) {
    // Cut short, or two downloads wrote the same part: nothing half-made is ever kept.
    await rm(part, { force: true });
    throw new Error(`got ${size} of ${total} bytes from ${url}; try again`);
  }
  await rename(part, file);
}

/** A GET from `from` bytes on; a 401 or 403 from the Hugging Face endpoint is asked again with the user's token. */
async function request(url: string, from: number, options: DownloadOptions): Promise<Response> {
  const headers: Record<string, string> = from > 0 ? { range: `bytes=${from}-` } : {};
  const response = await fetch(url, { headers, signal: options.signal });
  if (response.status !== 401 && response.status !== 403) return response;
  if (options.tokenOrigin === undefined || new URL(url).origin !== options.tokenOrigin) return response;
  const token = await huggingFaceToken(options.env ?? process.env);
  if (token === undefined) return response;
  await response.body?.cancel();
  // fetch drops Authorization when a redirect leaves the origin (the CDN gets none).
  return fetch(url, { headers: { ...headers, authorization: `Bearer ${token}` }, signal: options.signal });
}

/** As Hugging Face's tools find it (and node-llama-cpp): `HF_TOKEN`, else the token file `huggingface-cli login` writes. */
async function huggingFaceToken(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const variable = env.HF_TOKEN?.trim();
  if (variable) return variable;
  const home = env.HF_HOME || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'huggingface');
  const text = await readFile(env.HF_TOKEN_PATH || join(home, 'token'), 'utf8').catch(() => '');
  return text.trim() || undefined;
}
