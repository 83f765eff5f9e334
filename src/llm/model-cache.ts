/**
 * Where an `hf:` model lives once downloaded, and how a person gets it there: the exact file
 * name node-llama-cpp looks for in the models folder, the URL it downloads, and the one line
 * that says all of it. Nothing here loads node-llama-cpp, so `qmd status` and error messages
 * can name the file without paying ~1 s for it.
 *
 * The names follow node-llama-cpp 3.21.1's `parseModelUri` (`hf_<user>_[<repo>_]<file>`: the
 * repository is left out when the file name starts with it, less its `-GGUF`), for the
 * URIs qmd and the peer use; `test/llm/model-cache.test.ts` checks each against node-llama-cpp's
 * own resolver. A spec outside that subset (another branch, a name that would need escaping,
 * a plain URL) gets no name, and the message says so rather than guess.
 */
import { join } from 'node:path';
import { EMBED_MODEL_KIND, type ModelKind } from './model-choice.js';

/** node-llama-cpp's default quantization for `hf:user/repo` without a tag. */
const DEFAULT_QUANT = 'Q4_K_M';
/** Names that node-llama-cpp's filenamify leaves as they are. */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,90}$/;

export interface CachedModel {
  /** The file name node-llama-cpp looks for in the models folder. */
  file: string;
  /** Where it is downloaded from; undefined when node-llama-cpp asks the host first (a `:QUANT` tag). */
  url?: string;
}

/**
 * The cache file (and download URL) of `hf:user/repo/file.gguf`, `hf:user/repo/dir/file.gguf`
 * or `hf:user/repo:QUANT`; undefined for anything else.
 */
export function cachedModel(spec: string, endpoint: string): CachedModel | undefined {
  const match = /^(?:hf|huggingface):(?:\/\/)?([^/]+)\/([^/]+)(?:\/(.+))?$/i.exec(spec);
  if (match === null) return undefined;
  const [, user = '', repoTag = '', path] = match;
  if (path === undefined) return quantFile(user, repoTag);
  if (path.includes('#') || repoTag.includes(':')) return undefined;
  const parts = path.split('/');
  const name = parts.at(-1) ?? '';
  if (![user, repoTag, ...parts].every((part) => PLAIN.test(part)) || !/\.gguf$/i.test(name)) return undefined;
  const stem = name.slice(0, -'.gguf'.length).toLowerCase();
  const prefix = ['hf', user];
  if (!(/-gguf$/i.test(repoTag) && stem.startsWith(repoTag.slice(0, -'-gguf'.length).toLowerCase()))) {
    prefix.push(repoTag);
  }
  const folders = parts.slice(0, -1);
  if (folders.at(-1)?.toLowerCase() === stem) folders.pop();
  if (folders.length > 0) prefix.push(folders.join('__'));
  const base = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  return { file: `${prefix.join('_')}_${name}`, url: `${base}${user}/${repoTag}/resolve/main/${path}` };
}

function quantFile(user: string, repoTag: string): CachedModel | undefined {
  const [repo = '', tag = '', ...rest] = repoTag.split(':');
  if (rest.length > 0 || ![user, repo].every((part) => PLAIN.test(part))) return undefined;
  if (tag !== '' && !PLAIN.test(tag)) return undefined;
  const quant = tag === '' || tag.toLowerCase() === 'latest' ? DEFAULT_QUANT : tag.toUpperCase();
  const gguf = /-gguf$/i.test(repo);
  const base = gguf ? repo.slice(0, -'-gguf'.length) : repo;
  const prefix = gguf ? `hf_${user}_` : `hf_${user}_${repo}_`;
  return { file: `${prefix}${base}.${quant}.gguf` };
}

/**
 * How to get `spec` into `modelsDir`, or do without it, as the tail of a one-line message: the
 * command that downloads it (`qmd embed`, online), the exact file to place in the folder (as a
 * `curl` command when the URL is known), and the flag and variable that name a local model.
 */
export function howToGetModel(spec: string, modelsDir: string, endpoint: string, kind = EMBED_MODEL_KIND): string {
  const cached = cachedModel(spec, endpoint);
  const run = `run ${kind.downloadCommand} when online to download it`;
  const get =
    cached === undefined
      ? `${run} into ${modelsDir}`
      : cached.url === undefined
        ? `${run} (saved in ${modelsDir} as ${cached.file})`
        : `${run}, or fetch it yourself into the models folder: ` +
          `curl -fL --create-dirs -o ${join(modelsDir, cached.file)} ${cached.url}`;
  return `${get}; or use a local model: ${localModel(kind)}`;
}

/** `--embed-model PATH.gguf or QMD_EMBED_MODEL=PATH.gguf` */
export function localModel(kind: ModelKind): string {
  return `${kind.flag} PATH.gguf or ${kind.env}=PATH.gguf`;
}

/** The path node-llama-cpp would find `spec` at in `modelsDir`, when its name is known. */
export function cachedModelPath(spec: string, modelsDir: string, endpoint: string): string | undefined {
  const cached = cachedModel(spec, endpoint);
  return cached === undefined ? undefined : join(modelsDir, cached.file);
}
