/**
 * Downloads a model file from a URL we know (`model-cache.ts`), instead of node-llama-cpp's
 * downloader, which cannot be bounded: measured with 3.21.1 against a local host answering
 * 500 or 503 (`bench/experiments/model-download/host-errors.ts`), `resolveModelFile` was still
 * pending after 60 s (17 requests) and ignored its abort signal, so a sick mirror held
 * `qmd embed` for minutes and Ctrl-C could not end it. Here: one request (its redirects
 * followed by hand, at most `MAX_REDIRECTS`), its error at once, the signal honoured, and a
 * bound on silence (`QMD_DOWNLOAD_IDLE_MS`, 30 s): a host that stops sending mid-body, or never
 * answers, ends the download with a line saying so, where undici's own body timeout waits 300 s.
 *
 * Nothing reaches the model's name unless it is the model (docs/design.md §6, "Models"): the
 * body goes to `NAME.part` (0600, never through a link) in the same folder, and is renamed only
 * once it passed every check the host allows: an HTTP status of 200/206, a type that is not a
 * web page (a proxy or captive portal answers `200 text/html`), the GGUF magic in its first
 * bytes, the size the host announced (Content-Length, or the hub's `X-Linked-Size` on its
 * redirect to the CDN), the SHA-256 the hub announced (Hugging Face's `X-Linked-Etag`, or its
 * `ETag` when 64 hex digits: the LFS object's SHA-256), and the header's own account of the
 * tensors (`gguf-check.ts`: a body cut short with no size announced). A part cut short by a
 * stall or a dropped connection is kept and resumed by the next try (a Range request); one that
 * failed a check is deleted.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MAX_TIMER_MS, parseWholeNumber } from '../env.js';
import { makePrivateDir, openPrivateFile } from '../private-file.js';
import { ggufProblem, magicProblem } from './gguf-check.js';
import type { DownloadProgress } from './model-file.js';

/** 30 s without a byte: far longer than any healthy host pauses, far shorter than a person waits. */
export const DEFAULT_DOWNLOAD_IDLE_MS = 30_000;
/** Hugging Face takes two or three (a renamed repository, then the CDN); fetch's own bound is 20. */
export const MAX_REDIRECTS = 10;

/** The timer the idle bound runs on; tests pass a fake one. */
export interface IdleTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: IdleTimers = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface DownloadOptions {
  signal: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /** Where `HF_TOKEN`, the Hugging Face token file and `QMD_DOWNLOAD_IDLE_MS` are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The origin a token may be sent to (the Hugging Face endpoint); never another. */
  tokenOrigin?: string;
  /** Milliseconds without a byte (or an answer) before giving up. Default: `downloadIdleMs(env)`. */
  idleMs?: number;
  timers?: IdleTimers;
}

/**
 * `QMD_DOWNLOAD_IDLE_MS` (whole milliseconds ≥ 1), else 30 s. `src/cli/config.ts` refuses a
 * malformed value before a command starts; here one is simply not used.
 */
export function downloadIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.QMD_DOWNLOAD_IDLE_MS?.trim();
  return (text && parseWholeNumber(text, 1, MAX_TIMER_MS)) || DEFAULT_DOWNLOAD_IDLE_MS;
}

/** What the host said about the file, on the way to it. */
interface Announced {
  /** Its whole size: `X-Linked-Size`, else the final answer's length (with the part for a 206). */
  size?: number;
  /** Its SHA-256 in hex, when the hub gave one. */
  sha256?: string;
}

/** Downloads `url` to `file`; rejects with an Error saying what went wrong (the caller words it). */
export async function downloadModelFile(url: string, file: string, options: DownloadOptions): Promise<void> {
  makePrivateDir(dirname(file));
  const part = `${file}.part`;
  const idle = idleBound(options);
  const signal = AbortSignal.any([options.signal, idle.signal]);
  let have = await usablePart(part);
  try {
    let reply = await request(url, have, options, signal, idle.touch);
    if (reply.response.status === 416) {
      // The part is as long as the file or longer: start again.
      await reply.response.body?.cancel();
      await rm(part, { force: true });
      have = 0;
      reply = await request(url, 0, options, signal, idle.touch);
    }
    const { response, announced } = reply;
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new Error(
        `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${reply.url}`,
      );
    }
    refuseWebPage(response, reply.url);
    if (response.status === 200) have = 0; // the host ignored the range: the whole file comes
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    const size = announced.size ?? (Number.isFinite(length) ? have + length : undefined);
    const hash = announced.sha256 === undefined ? undefined : createHash('sha256');
    if (hash !== undefined && have > 0) await hashFile(part, hash, signal, idle.touch);
    const body = response.body;
    if (body === null) throw new Error(`no body from ${reply.url}`);
    await receive(body, part, { have, size, hash, signal, touch: idle.touch, onProgress: options.onProgress });
    await verify(part, { size, hash, announced, url: reply.url });
    await rename(part, file);
  } catch (error) {
    throw idle.signal.aborted && !options.signal.aborted ? await stalled(part, url, idle.ms) : error;
  } finally {
    idle.stop();
  }
}

/** An abort signal that fires after `idleMs` without `touch()`. */
function idleBound(options: DownloadOptions) {
  const timers = options.timers ?? realTimers;
  const ms = options.idleMs ?? downloadIdleMs(options.env);
  const controller = new AbortController();
  let handle = timers.set(() => controller.abort(), ms);
  return {
    ms,
    signal: controller.signal,
    touch(): void {
      if (controller.signal.aborted) return;
      timers.clear(handle);
      handle = timers.set(() => controller.abort(), ms);
    },
    stop: () => timers.clear(handle),
  };
}

/** The length of a part an earlier try left, if it is one worth resuming (a model's start). */
async function usablePart(part: string): Promise<number> {
  const stat = await lstat(part).catch(() => undefined);
  if (stat === undefined) return 0;
  if (stat.isFile() && stat.size >= 4) {
    const head = Buffer.alloc(4);
    const read = await open(part, 'r')
      .then(async (handle) => {
        try {
          return (await handle.read(head, 0, 4, 0)).bytesRead;
        } finally {
          await handle.close();
        }
      })
      .catch(() => 0);
    if (read === 4 && magicProblem(head) === undefined) return stat.size;
  }
  await rm(part, { force: true });
  return 0;
}

/**
 * A GET from `from` bytes on, its redirects followed here (so the hub's `X-Linked-*` headers on
 * its redirect to the CDN are seen, and a loop is bounded); a 401 or 403 from the Hugging Face
 * endpoint is asked again with the user's token, which never leaves that origin.
 */
async function request(url: string, from: number, options: DownloadOptions, signal: AbortSignal, touch: () => void) {
  const announced: Announced = {};
  let token: string | undefined;
  let current = url;
  for (let hop = 0; ; hop++) {
    const sameOrigin = options.tokenOrigin !== undefined && new URL(current).origin === options.tokenOrigin;
    const headers: Record<string, string> = {
      ...(from > 0 && { range: `bytes=${from}-` }),
      ...(token !== undefined && sameOrigin && { authorization: `Bearer ${token}` }),
    };
    let response = await fetch(current, { headers, signal, redirect: 'manual' });
    touch();
    if ((response.status === 401 || response.status === 403) && sameOrigin && token === undefined) {
      token = await huggingFaceToken(options.env ?? process.env);
      if (token !== undefined) {
        await response.body?.cancel();
        response = await fetch(current, {
          headers: { ...headers, authorization: `Bearer ${token}` },
          signal,
          redirect: 'manual',
        });
        touch();
      }
    }
    noteAnnounced(response, announced, hop === 0 || sameOrigin);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) {
      if (announced.size === undefined && response.status === 206) {
        const total = Number(/\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1] ?? Number.NaN);
        if (Number.isFinite(total)) announced.size = total;
      }
      return { response, announced, url: current };
    }
    await response.body?.cancel();
    const next = new URL(location, current).href;
    if (hop >= MAX_REDIRECTS) {
      throw new Error(
        `${url} redirected more than ${MAX_REDIRECTS} times (last to ${next}): a proxy or mirror is sending it round in a loop`,
      );
    }
    current = next;
  }
}

/**
 * The hub's own account of the file: `X-Linked-Size` and `X-Linked-Etag` (Hugging Face sets
 * both on the redirect of an LFS file to its CDN), and an `ETag` of 64 hex digits from the hub
 * itself (the LFS object's SHA-256; a CDN's ETag is its own business, an MD5 or an opaque tag).
 */
function noteAnnounced(response: Response, announced: Announced, fromHub: boolean): void {
  const linkedSize = parseWholeNumber(response.headers.get('x-linked-size')?.trim() ?? '');
  if (linkedSize !== undefined) announced.size ??= linkedSize;
  const tags = [response.headers.get('x-linked-etag'), fromHub ? response.headers.get('etag') : null];
  for (const tag of tags) {
    const hex = tag?.replace(/^W\//, '').replace(/"/g, '').trim().toLowerCase();
    if (hex !== undefined && /^[0-9a-f]{64}$/.test(hex)) announced.sha256 ??= hex;
  }
}

/** A 200 that is a web page: a proxy's, a captive portal's, a login form in place of the file. */
function refuseWebPage(response: Response, url: string): void {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== 'text/html' && type !== 'application/xhtml+xml') return;
  void response.body?.cancel();
  throw new Error(
    `${new URL(url).origin} answered with a web page (${type}), not the model: a proxy or a login page answered in its place (open ${url} in a browser to see it, or set HF_ENDPOINT to a mirror)`,
  );
}

/** The body into the part, counted, hashed, its first bytes checked, each chunk resetting the idle bound. */
async function receive(
  body: ReadableStream<Uint8Array>,
  part: string,
  options: {
    have: number;
    size: number | undefined;
    hash: Hash | undefined;
    signal: AbortSignal;
    touch: () => void;
    onProgress: ((progress: DownloadProgress) => void) | undefined;
  },
): Promise<void> {
  const { have, size, hash, touch, onProgress } = options;
  let done = have;
  let head: Buffer | undefined = have === 0 ? Buffer.alloc(0) : undefined;
  const fd = openPrivateFile(part, have > 0 ? 'append' : 'truncate');
  await pipeline(
    Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>),
    async function* count(chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        touch();
        if (head !== undefined) {
          // A page in place of a model is refused at its first bytes, not after 300 MB of it.
          head = Buffer.concat([head, chunk]).subarray(0, 512);
          if (head.length >= 4) {
            const wrong = magicProblem(head);
            if (wrong !== undefined) throw new NotAModel(wrong);
            head = undefined;
          }
        }
        done += chunk.length;
        hash?.update(chunk);
        onProgress?.({ downloadedBytes: done, totalBytes: size ?? 0 });
        yield chunk;
      }
    },
    createWriteStream(part, { fd }),
    { signal: options.signal },
  ).catch(async (error: unknown) => {
    if (error instanceof NotAModel) {
      await rm(part, { force: true });
      throw error;
    }
    if (options.signal.aborted) throw error;
    // The host closed the connection (or it broke) mid-body: what arrived is kept for the next try.
    const of = size === undefined ? '' : ` of ${megabytes(size)}`;
    throw new Error(
      `the connection broke after ${megabytes(done)}${of} MB (${causeOf(error)}); run it again to resume`,
      { cause: error },
    );
  });
}

class NotAModel extends Error {
  constructor(problem: string) {
    super(
      /web page/.test(problem)
        ? `the host sent a web page, not the model: a proxy or a login page answered in its place`
        : `the host sent something else than the model: ${problem}`,
    );
  }
}

/** The part against what was announced and against its own header; one that fails is deleted. */
async function verify(
  part: string,
  expected: { size: number | undefined; hash: Hash | undefined; announced: Announced; url: string },
): Promise<void> {
  const got = (await lstat(part)).size;
  const { size, hash, announced, url } = expected;
  if (size !== undefined && got < size) {
    // Kept: the next try asks for the rest.
    throw new Error(
      `the connection closed after ${megabytes(got)} of ${megabytes(size)} MB from ${url}; run it again to resume`,
    );
  }
  const fail = async (why: string): Promise<never> => {
    await rm(part, { force: true });
    throw new Error(why);
  };
  if (size !== undefined && got > size)
    await fail(`got ${got} bytes from ${url} where ${size} were announced; try again`);
  const problem = await ggufProblem(part);
  if (problem !== undefined) await fail(`what ${new URL(url).origin} sent is not a whole model: ${problem}; try again`);
  const digest = hash?.digest('hex');
  if (digest !== undefined && digest !== announced.sha256) {
    await fail(
      `the file's SHA-256 (${digest.slice(0, 12)}…) is not the one the hub announced (${announced.sha256?.slice(0, 12)}…): it was damaged or altered on the way; try again`,
    );
  }
}

async function stalled(part: string, url: string, ms: number): Promise<Error> {
  const got = (await lstat(part).catch(() => undefined))?.size ?? 0;
  const seconds = ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
  return new Error(
    `no data from ${new URL(url).origin} for ${seconds} (QMD_DOWNLOAD_IDLE_MS): the download stalled` +
      `${got > 0 ? ` after ${megabytes(got)} MB; run it again to resume` : '; try again later'}`,
  );
}

async function hashFile(file: string, hash: Hash, signal: AbortSignal, touch: () => void): Promise<void> {
  for await (const chunk of createReadStream(file, { signal })) {
    hash.update(chunk as Buffer);
    touch();
  }
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

function megabytes(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}

/** As Hugging Face's tools find it (and node-llama-cpp): `HF_TOKEN`, else the token file `huggingface-cli login` writes. */
async function huggingFaceToken(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const variable = env.HF_TOKEN?.trim();
  if (variable) return variable;
  const home = env.HF_HOME || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'huggingface');
  const text = await readFile(env.HF_TOKEN_PATH || join(home, 'token'), 'utf8').catch(() => '');
  return text.trim() || undefined;
}
