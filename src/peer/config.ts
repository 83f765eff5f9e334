import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { errorMessage, QmdError } from '../errors.js';
import { printable } from './printable.js';

/** One collection of qmd 2.x's `index.yml`, with its defaults filled in. */
export interface PeerCollection {
  name: string;
  /** Absolute (`~/` expanded; a relative path is read from the file's folder). */
  path: string;
  /** Its glob mask, as written (`**\/*.md` when absent); commas separate several. */
  pattern: string;
  ignore: string[];
  update?: string;
  includeByDefault: boolean;
  /** Path prefix (`''` for the whole collection, no leading or trailing `/`) → text. */
  contexts: Array<{ prefix: string; text: string }>;
}

/** What qmd 2.x's `index.yml` says (README "Configuring index.yml"). */
export interface PeerConfig {
  file: string;
  collections: PeerCollection[];
  globalContext?: string;
  /** `models.embed|rerank|generate`: `hf:` URIs or `.gguf` paths overriding its defaults. */
  models: { embed?: string; rerank?: string; generate?: string };
  /** `editor_uri` (or `editor_uri_template`): the terminal hyperlink template. */
  editorUri?: string;
}

const DEFAULT_PATTERN = '**/*.md';

/**
 * The largest `index.yml` read: qmd 2.x writes a few hundred bytes a collection, so 1 MiB holds
 * thousands. The YAML library's document model costs 40 to 60 times the text in memory
 * (measured, `bench/migrate-hostile.ts`: a 50 MB `global_context` peaked at 2.1 GB, a 41 MB file
 * of 600,000 collections held 1.8 GB past 120 s; just under 1 MiB peaks at 120 MB, the process
 * itself 58), so a bound on the bytes is a bound on the parse.
 */
export const MAX_PEER_CONFIG_BYTES = 1024 * 1024;
/** More collections than anyone keeps (each is a folder scanned by `migrate`). */
export const MAX_PEER_COLLECTIONS = 1000;

/**
 * Reads qmd 2.x's configuration at `file`, or undefined when there is none. A file that is
 * not the YAML qmd 2.x writes is BAD_ARGUMENT naming the file and the key; so is one larger
 * than `MAX_PEER_CONFIG_BYTES` (refused before it is parsed) or with more than
 * `MAX_PEER_COLLECTIONS` collections. Keys are shown `printable` in every message.
 */
export function readPeerConfig(file: string): PeerConfig | undefined {
  const text = readBounded(file);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new QmdError('BAD_ARGUMENT', `${file} is not valid YAML: ${printable(firstLine(errorMessage(error)))}`);
  }
  return fromYaml(file, parsed ?? {});
}

/** The file's text, read no further than the bound (a FIFO or `/dev/zero` named by --config too). */
function readBounded(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new QmdError('NOT_FOUND', `Cannot read ${file}: ${errorMessage(error)}`);
  }
  try {
    const size = fs.fstatSync(fd).size;
    const tooLarge = (bytes: string) =>
      new QmdError(
        'BAD_ARGUMENT',
        `${file} is ${bytes}: qmd migrate reads an index.yml of at most 1 MiB (qmd 2.x writes a few KB); check that it is qmd 2.x's, or give another with --config`,
      );
    if (size > MAX_PEER_CONFIG_BYTES) throw tooLarge(`${(size / (1024 * 1024)).toFixed(1)} MiB`);
    const buffer = Buffer.alloc(MAX_PEER_CONFIG_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) {
      read = fs.readSync(fd, buffer, length, buffer.length - length, null);
    }
    if (length > MAX_PEER_CONFIG_BYTES) throw tooLarge('more than 1 MiB');
    return buffer.subarray(0, length).toString('utf8');
  } catch (error) {
    if (error instanceof QmdError) throw error;
    throw new QmdError('NOT_FOUND', `Cannot read ${file}: ${errorMessage(error)}`);
  } finally {
    fs.closeSync(fd);
  }
}

function fromYaml(file: string, root: unknown): PeerConfig {
  const bad = (key: string, want: string) =>
    new QmdError('BAD_ARGUMENT', `${file}: ${printable(key)} must be ${want}; fix it, then run qmd migrate again`);
  if (!isRecord(root)) throw bad('the top level', 'a mapping');
  const collections = root.collections ?? {};
  if (!isRecord(collections)) throw bad('collections', 'a mapping of names to collections');
  const count = Object.keys(collections).length;
  if (count > MAX_PEER_COLLECTIONS) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `${file} lists ${count.toLocaleString('en')} collections: qmd migrate carries at most ${MAX_PEER_COLLECTIONS.toLocaleString('en')}; check that it is qmd 2.x's, or give another with --config`,
    );
  }
  const config: PeerConfig = { file, collections: [], models: {} };
  for (const [name, value] of Object.entries(collections)) {
    const key = `collections.${name}`;
    if (!isRecord(value)) throw bad(key, 'a mapping');
    if (typeof value.path !== 'string' || value.path.trim() === '') throw bad(`${key}.path`, 'a folder');
    const pattern = value.pattern ?? DEFAULT_PATTERN;
    if (typeof pattern !== 'string') throw bad(`${key}.pattern`, 'a glob');
    const ignore = value.ignore ?? [];
    if (!Array.isArray(ignore) || !ignore.every((item) => typeof item === 'string')) {
      throw bad(`${key}.ignore`, 'a list of globs');
    }
    if (value.update !== undefined && value.update !== null && typeof value.update !== 'string') {
      throw bad(`${key}.update`, 'a shell command');
    }
    if (value.includeByDefault !== undefined && typeof value.includeByDefault !== 'boolean') {
      throw bad(`${key}.includeByDefault`, 'true or false');
    }
    const context = value.context ?? {};
    if (!isRecord(context) || !Object.values(context).every((text) => typeof text === 'string')) {
      throw bad(`${key}.context`, 'a mapping of path prefixes to texts');
    }
    config.collections.push({
      name,
      path: absolute(value.path, path.dirname(file)),
      pattern,
      ignore,
      ...(typeof value.update === 'string' && value.update.trim() !== '' && { update: value.update }),
      includeByDefault: value.includeByDefault !== false,
      contexts: Object.entries(context as Record<string, string>).map(([prefix, text]) => ({
        prefix: prefix.replace(/^\/+|\/+$/g, ''),
        text,
      })),
    });
  }
  const global = root.global_context;
  if (global !== undefined && global !== null && typeof global !== 'string') throw bad('global_context', 'a text');
  if (typeof global === 'string' && global.trim() !== '') config.globalContext = global;
  const models = root.models ?? {};
  if (!isRecord(models)) throw bad('models', 'a mapping');
  for (const role of ['embed', 'rerank', 'generate'] as const) {
    const model = models[role];
    if (typeof model === 'string' && model.trim() !== '') config.models[role] = model.trim();
  }
  const editor = root.editor_uri ?? root.editor_uri_template;
  if (typeof editor === 'string' && editor.trim() !== '') config.editorUri = editor;
  return config;
}

function absolute(folder: string, base: string): string {
  const trimmed = folder.trim();
  if (trimmed === '~' || trimmed.startsWith('~/')) return path.join(os.homedir(), trimmed.slice(1));
  return path.resolve(base, trimmed);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
