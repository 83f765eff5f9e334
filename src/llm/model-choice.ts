/**
 * Which model a command uses, and how a spec is written down so that it means the same from
 * any working directory. Loaded by every command's configuration: it imports only `node:path`. One rule for every kind of model (embedding today; query expansion
 * and reranking use the same function with their own flag, variable and default).
 */
import { isAbsolute, resolve } from 'node:path';

/** Specs node-llama-cpp's resolver downloads: `hf:`/`huggingface:` URIs and http(s) URLs. */
export function isRemoteSpec(spec: string): boolean {
  return /^(hf|huggingface):/i.test(spec) || /^https?:\/\//i.test(spec);
}

/**
 * How messages name a kind of model: what it is, the flag and the variable that name one, and
 * the command that downloads it. The embedding model's is the only one today; a reranker or a
 * query-expansion model gives its own to the same resolver and messages (`ResolveOptions.kind`).
 */
export interface ModelKind {
  noun: string;
  flag: string;
  env: string;
  downloadCommand: string;
  /** What searches still do without it, said when it cannot be had (`Search works meanwhile, with BM25 only`). */
  meanwhile: string;
}

export const EMBED_MODEL_KIND: ModelKind = {
  noun: 'embedding model',
  flag: '--embed-model',
  env: 'QMD_EMBED_MODEL',
  downloadCommand: 'qmd embed',
  meanwhile: 'Search works meanwhile, with BM25 only',
};

/** Where a model spec came from, strongest first: a flag beats its variable (src/cli/config.ts). */
export type ModelSource = 'flag' | 'env' | 'index' | 'default';

export interface ModelChoice {
  /** An absolute `.gguf` path, an `hf:` URI or an http(s) URL. */
  spec: string;
  source: ModelSource;
}

/**
 * The model named by a person (`given`: a flag or a variable), else the one the index remembers
 * (the embedding model its vectors were made with: `qmd embed --embed-model M` once, and every
 * later reader uses M), else `fallback`. Undefined: no model at all.
 */
export function chooseModel(
  given: ModelChoice | undefined,
  remembered: string | null | undefined,
  fallback: string | undefined,
): ModelChoice | undefined {
  if (given !== undefined) return given;
  if (remembered !== null && remembered !== undefined) return { spec: remembered, source: 'index' };
  if (fallback !== undefined) return { spec: fallback, source: 'default' };
  return undefined;
}

/**
 * A local path made absolute against `cwd` (the index stores what `embed` used, and is read
 * from other directories: `qmd mcp` started by a client, the shared server); a URI as given.
 */
export function absoluteModelSpec(spec: string, cwd: string = process.cwd()): string {
  if (isRemoteSpec(spec) || isAbsolute(spec)) return spec;
  return resolve(cwd, spec);
}
