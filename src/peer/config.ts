import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { errorMessage, QmdError } from '../errors.js';

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
 * Reads qmd 2.x's configuration at `file`, or undefined when there is none. A file that is
 * not the YAML qmd 2.x writes is BAD_ARGUMENT naming the file and the key.
 */
export function readPeerConfig(file: string): PeerConfig | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new QmdError('NOT_FOUND', `Cannot read ${file}: ${errorMessage(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new QmdError('BAD_ARGUMENT', `${file} is not valid YAML: ${firstLine(errorMessage(error))}`);
  }
  return fromYaml(file, parsed ?? {});
}

function fromYaml(file: string, root: unknown): PeerConfig {
  const bad = (key: string, want: string) =>
    new QmdError('BAD_ARGUMENT', `${file}: ${key} must be ${want}; fix it, then run qmd migrate again`);
  if (!isRecord(root)) throw bad('the top level', 'a mapping');
  const collections = root.collections ?? {};
  if (!isRecord(collections)) throw bad('collections', 'a mapping of names to collections');
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
