/**
 * From a model spec (a local `.gguf` path or an `hf:` URI) to a file on disk, and from that
 * file to a fingerprint. Nothing here loads llama.cpp: the resolver of `hf:` URIs is passed
 * in from the lazily imported node-llama-cpp.
 */
import { createHash } from 'node:crypto';
import { open, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { qmdCacheDir } from '../env.js';
import type { Log } from '../log.js';
import { LlmError } from './errors.js';
import { ggufProblem } from './gguf-check.js';
import { cachedModel, howToGetModel, localModel } from './model-cache.js';
import { EMBED_MODEL_KIND, isRemoteSpec, type ModelKind } from './model-choice.js';
import { downloadModelFile } from './model-download.js';

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

/** The part of node-llama-cpp this file needs (its `resolveModelFile`). */
export type ModelFileResolver = (
  uri: string,
  options: {
    directory: string;
    download: 'auto' | false;
    cli: false;
    signal?: AbortSignal;
    onProgress?: (status: { totalSize: number; downloadedSize: number }) => void;
  },
) => Promise<string>;

/** How far a download has come: node-llama-cpp's `onProgress`, renamed. */
export interface DownloadProgress {
  downloadedBytes: number;
  totalBytes: number;
}

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
  /** Called as a download goes (several times a second); never when the file is cached. */
  onDownloadProgress?: (progress: DownloadProgress) => void;
  /** How messages name the model (default: the embedding model, `--embed-model`, `qmd embed`). */
  kind?: ModelKind;
  /** Download it again even when cached (`qmd pull --refresh`); the cached file stays until the new one is whole. */
  refresh?: boolean;
  /** Where `QMD_DOWNLOAD_IDLE_MS` and the Hugging Face token are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Silence that ends a download (ms). Default: `QMD_DOWNLOAD_IDLE_MS` in `env`, else 30 s. */
  idleMs?: number;
}

/**
 * The local file for `spec`. A remote spec found in `modelsDir` resolves without network.
 * Otherwise it is downloaded (`download` below), but only after a quick reachability check of
 * the host: measured here with no network, `resolveModelFile` did not settle within 120 s and
 * ignored its abort signal (its downloader, ipull 3.9.5, retries the request for the file's
 * size up to 150 times, backing off from 200 ms by 1.5x to 5 s, ~12 minutes, and `signal` only
 * reaches the download that follows). The check turns that into an immediate
 * `MODEL_UNAVAILABLE`, bounded by `probeTimeoutMs`, with the way to get the file.
 */
export async function resolveModelPath(spec: string, options: ResolveOptions): Promise<string> {
  const kind = options.kind ?? EMBED_MODEL_KIND;
  if (!isRemoteSpec(spec)) return localModelPath(spec, kind);
  const resolveModelFile = await options.resolver();
  let cached: string | undefined;
  try {
    cached = await resolveModelFile(spec, { directory: options.modelsDir, download: false, cli: false });
  } catch {
    // Not cached: download below, if allowed.
  }
  if (cached !== undefined && !options.refresh) {
    // A file an older release, another tool or a proxy left under the model's name: named,
    // never loaded, and fetched again by the commands that download (docs/design.md §6).
    const problem = await ggufProblem(cached).catch(() => undefined);
    if (problem === undefined) return cached;
    if (!options.download) {
      throw new LlmError(
        'MODEL_UNAVAILABLE',
        `the cached ${kind.noun} ${cached} is not usable: ${problem}; run ${kind.downloadCommand} to fetch it again (searches never download)`,
      );
    }
    await rm(cached, { force: true });
    options.log.line(`The cached ${kind.noun} ${cached} was not usable (${problem}): deleted it, fetching it again`);
  }
  const endpoint = hfEndpoint();
  if (!options.download) {
    // A search never starts a 300 MB download inside a tool call: only `qmd embed` downloads.
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `the ${kind.noun} ${spec} is not downloaded yet (searches never download): ` +
        howToGetModel(spec, options.modelsDir, endpoint, kind),
    );
  }
  await probe(spec, options, endpoint, kind);
  options.log.line(`Downloading the ${kind.noun} ${spec} to ${options.modelsDir}...`);
  const started = performance.now();
  try {
    const file = await download(spec, resolveModelFile, options, endpoint);
    const { size } = await stat(file);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    options.log.line(`Downloaded the ${kind.noun} to ${file} (${(size / 1e6).toFixed(1)} MB in ${seconds} s)`);
    return file;
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `could not download the ${kind.noun} ${spec}: ${message(error)} (a local model needs no download: ${localModel(kind)})`,
      { cause: error },
    );
  }
}

/**
 * A URI whose file and URL we know (`hf:user/repo/file.gguf`, every model qmd names) is fetched
 * by `downloadModelFile`: one request, bounded, abortable. Anything else (a `:QUANT` tag, which
 * needs the host's manifest, or a plain URL) goes to node-llama-cpp's resolver.
 */
async function download(
  spec: string,
  resolveModelFile: ModelFileResolver,
  options: ResolveOptions,
  endpoint: string,
): Promise<string> {
  const { onDownloadProgress, modelsDir, signal } = options;
  const known = cachedModel(spec, endpoint);
  if (known?.url !== undefined) {
    const file = join(modelsDir, known.file);
    await downloadModelFile(known.url, file, {
      signal,
      tokenOrigin: new URL(endpoint).origin,
      ...(options.env !== undefined && { env: options.env }),
      ...(options.idleMs !== undefined && { idleMs: options.idleMs }),
      ...(onDownloadProgress !== undefined && { onProgress: onDownloadProgress }),
    });
    return file;
  }
  if (options.refresh) {
    // node-llama-cpp's resolver cannot be told to fetch a cached file again: it goes first.
    const cached = await resolveModelFile(spec, { directory: modelsDir, download: false, cli: false }).catch(
      () => undefined,
    );
    if (cached !== undefined) await rm(cached, { force: true });
  }
  // `cli: false`: with it on, the resolver prints its progress to stdout.
  return resolveModelFile(spec, {
    directory: modelsDir,
    download: 'auto',
    cli: false,
    signal,
    ...(onDownloadProgress !== undefined && {
      onProgress: ({ totalSize, downloadedSize }) =>
        onDownloadProgress({ downloadedBytes: downloadedSize, totalBytes: totalSize }),
    }),
  });
}

async function localModelPath(spec: string, kind: ModelKind): Promise<string> {
  const file = resolve(spec);
  const info = await stat(file).catch(() => undefined);
  if (info?.isFile() !== true) {
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `no ${kind.noun} file at ${file} (${kind.flag} and ${kind.env} take a .gguf path or an hf: URI)`,
    );
  }
  const problem = await ggufProblem(file).catch(() => undefined);
  if (problem !== undefined)
    throw new LlmError('MODEL_UNAVAILABLE', `the ${kind.noun} file ${file} is not usable: ${problem}`);
  return file;
}

/**
 * Where `hf:` URIs download from, as node-llama-cpp resolves it: `MODEL_ENDPOINT`, else
 * `HF_ENDPOINT` (the variable Hugging Face's own tools read, for mirrors; the tests point it
 * at a local server), else huggingface.co. Always ends with `/`.
 */
export function hfEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  for (const endpoint of [env.MODEL_ENDPOINT, env.HF_ENDPOINT]) {
    if (endpoint !== undefined && URL.canParse(endpoint)) return endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  }
  return 'https://huggingface.co/';
}

/** The host a remote spec downloads from; `hf:` honours the same env vars as node-llama-cpp. */
export function downloadOrigin(spec: string, env: NodeJS.ProcessEnv = process.env): string {
  if (/^https?:\/\//i.test(spec)) return new URL(spec).origin;
  return new URL(hfEndpoint(env)).origin;
}

/** Any HTTP answer means the host is reachable; a network error or the timeout means not. */
async function probe(spec: string, options: ResolveOptions, endpoint: string, kind: ModelKind): Promise<void> {
  const { signal } = options;
  const origin = downloadOrigin(spec);
  try {
    // AbortSignal.timeout's timer does not keep the event loop alive.
    const response = await fetch(origin, {
      method: 'HEAD',
      signal: AbortSignal.any([signal, AbortSignal.timeout(options.probeTimeoutMs ?? 5000)]),
    });
    await response.body?.cancel();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new LlmError(
      'MODEL_UNAVAILABLE',
      `cannot download the ${kind.noun} ${spec}: ${origin} is unreachable (${message(error)}): ` +
        `${howToGetModel(spec, options.modelsDir, endpoint, kind)}. ${kind.meanwhile}`,
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
