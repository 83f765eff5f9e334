/**
 * From a model spec (a local `.gguf` path or an `hf:` URI) to a file on disk, and from that
 * file to a fingerprint. Nothing here loads llama.cpp: the resolver of `hf:` URIs is passed
 * in from the lazily imported node-llama-cpp.
 */
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { qmdCacheDir } from '../env.js';
import type { Log } from '../log.js';
import { LlmError } from './errors.js';

/**
 * The default embedding model: Google's EmbeddingGemma 300M, Q8_0, as published by ggml-org
 * (333,590,944 bytes, 768 dimensions, Gemma Terms of Use). Why this one: it is the default
 * of the peer qmd, so a user coming from it already has the file in `~/.cache/qmd/models`
 * (node-llama-cpp names it `hf_ggml-org_embeddinggemma-300M-Q8_0.gguf`) and nothing is
 * downloaded; it is small enough for CPU (2 cores) and multilingual; ggml-org publishes it,
 * so llama.cpp supports the architecture. It expects task prefixes, which the caller adds:
 * `task: search result | query: ...` for queries, `title: none | text: ...` for documents.
 */
export const DEFAULT_EMBED_MODEL = 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf';

/** `models` in qmd's cache directory: `$XDG_CACHE_HOME/qmd/models`, else `~/.cache/qmd/models` (the peer's too). */
export function defaultModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return qmdCacheDir(env, 'models');
}

/** Specs node-llama-cpp's resolver downloads: `hf:`/`huggingface:` URIs and http(s) URLs. */
export function isRemoteSpec(spec: string): boolean {
  return /^(hf|huggingface):/i.test(spec) || /^https?:\/\//i.test(spec);
}

/** The part of node-llama-cpp this file needs (its `resolveModelFile`). */
export type ModelFileResolver = (
  uri: string,
  options: { directory: string; download: 'auto' | false; cli: false; signal?: AbortSignal },
) => Promise<string>;

export interface ResolveOptions {
  modelsDir: string;
  /** Download a remote model that is not cached yet. */
  download: boolean;
  /** node-llama-cpp's resolver, only needed (and only imported) for remote specs. */
  resolver: () => Promise<ModelFileResolver>;
  log: Log;
  signal: AbortSignal;
  /** Bound on the reachability check before a download (ms). */
  probeTimeoutMs?: number;
}

/**
 * The local file for `spec`. A remote spec found in `modelsDir` resolves without network.
 * Otherwise it is downloaded, but only after a quick reachability check of the host: measured
 * here with no network, `resolveModelFile` did not settle within 120 s and ignored its
 * abort signal (its downloader, ipull 3.9.5, retries the request for the file's size up to 150
 * times, backing off from 200 ms by 1.5x to 5 s, ~12 minutes, and `signal` only reaches the
 * download that follows).
 * The check turns that into an immediate `MODEL_UNAVAILABLE`, bounded by `probeTimeoutMs`.
 */
export async function resolveModelPath(spec: string, options: ResolveOptions): Promise<string> {
  if (!isRemoteSpec(spec)) return localModelPath(spec);
  const resolveModelFile = await options.resolver();
  try {
    return await resolveModelFile(spec, { directory: options.modelsDir, download: false, cli: false });
  } catch {
    // Not cached: download below, if allowed.
  }
  if (!options.download) {
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `embedding model ${spec} is not in ${options.modelsDir} and downloads are off`,
    );
  }
  await probe(spec, options.signal, options.probeTimeoutMs ?? 5000);
  options.log.line(`Downloading the embedding model ${spec} to ${options.modelsDir}...`);
  try {
    // `cli: false`: with it on, the resolver prints its progress to stdout.
    const file = await resolveModelFile(spec, {
      directory: options.modelsDir,
      download: 'auto',
      cli: false,
      signal: options.signal,
    });
    options.log.line(`Downloaded the embedding model to ${file}`);
    return file;
  } catch (error) {
    throw new LlmError('MODEL_UNAVAILABLE', `could not download the embedding model ${spec}: ${message(error)}`, {
      cause: error,
    });
  }
}

async function localModelPath(spec: string): Promise<string> {
  const file = resolve(spec);
  const info = await stat(file).catch(() => undefined);
  if (info?.isFile() !== true) {
    throw new LlmError('MODEL_UNAVAILABLE', `no embedding model file at ${file} (give a .gguf path or an hf: URI)`);
  }
  return file;
}

/** The host a remote spec downloads from; `hf:` honours the same env vars as node-llama-cpp. */
export function downloadOrigin(spec: string, env: NodeJS.ProcessEnv = process.env): string {
  if (/^https?:\/\//i.test(spec)) return new URL(spec).origin;
  for (const endpoint of [env.MODEL_ENDPOINT, env.HF_ENDPOINT]) {
    if (endpoint !== undefined && URL.canParse(endpoint)) return new URL(endpoint).origin;
  }
  return 'https://huggingface.co';
}

/** Any HTTP answer means the host is reachable; a network error or the timeout means not. */
async function probe(spec: string, signal: AbortSignal, timeoutMs: number): Promise<void> {
  const origin = downloadOrigin(spec);
  try {
    // AbortSignal.timeout's timer does not keep the event loop alive.
    const response = await fetch(origin, {
      method: 'HEAD',
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    await response.body?.cancel();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `cannot download the embedding model ${spec}: ${origin} is unreachable (${message(error)}); ` +
        'no network? Search works without embeddings (BM25 only). Download the model once with network, ' +
        'or give a local .gguf path.',
      { cause: error },
    );
  }
}

function message(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

const SAMPLE = 1 << 20;

/**
 * A content fingerprint of a model file: SHA-256 of its size, first MiB and last MiB. The
 * head holds the GGUF metadata (architecture, vocabulary, hyperparameters), the tail the last
 * tensors' weights, so another model or another quantization changes it, while copying or
 * touching the file does not (re-embedding everything is expensive). Reads 2 MiB at most.
 */
export async function modelFingerprint(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const hash = createHash('sha256').update(`gguf:${size}:`);
    const head = Buffer.alloc(Math.min(SAMPLE, size));
    await handle.read(head, 0, head.length, 0);
    hash.update(head);
    if (size > SAMPLE) {
      const tail = Buffer.alloc(Math.min(SAMPLE, size - SAMPLE));
      await handle.read(tail, 0, tail.length, size - tail.length);
      hash.update(tail);
    }
    return `sha256:${hash.digest('hex')}`;
  } finally {
    await handle.close();
  }
}
