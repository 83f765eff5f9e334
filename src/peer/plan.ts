import * as fs from 'node:fs';
import { errorMessage, QmdError } from '../errors.js';
import { MAX_CONTEXT_CHARS } from '../store/contexts.js';
import { checkCollectionName, checkMask, nameFromDirectory } from '../store/paths.js';
import type { PeerIndex } from '../store/peer-index.js';
import type { PeerCollection, PeerConfig } from './config.js';
import { printable } from './printable.js';

/**
 * Folders qmd 2.8.3 never indexes, whatever the collection says (`excludeDirs` in its
 * `indexFiles`). Ours leaves out `node_modules` and every hidden folder (`.git`, `.cache`)
 * already; a migrated collection ignores the rest explicitly, so it indexes what qmd 2.x did.
 */
export const PEER_EXCLUDED = ['**/vendor/**', '**/dist/**', '**/build/**'] as const;

/** qmd 2.8.3's defaults for `models:` (it writes them into every `index.yml`). */
const PEER_DEFAULT_MODELS = {
  embed: 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf',
  rerank: 'hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf',
  generate: 'hf:tobil/qmd-query-expansion-1.7B-gguf/qmd-query-expansion-1.7B-q4_k_m.gguf',
};

export interface PlannedCollection {
  /** Its name here: qmd 2.x's, unless that is not a valid name here (`renamedFrom`). */
  name: string;
  renamedFrom?: string;
  root: string;
  mask: string;
  ignore: string[];
  update?: string;
  includeByDefault: boolean;
  /** Documents qmd 2.x had in it (its index), when its index was read. */
  peerDocuments?: number;
}

export interface PlannedContext {
  /** As `qmd context add` takes it: `/`, `collection` or `collection/sub/dir`. */
  place: string;
  text: string;
}

export interface MigrationPlan {
  /** What will be added, in order: every check `addCollection` makes has passed. */
  collections: PlannedCollection[];
  /** qmd 2.x's collections that will not be, each with why (one phrase, printable). */
  skipped: Array<{ name: string; why: string }>;
  /** The global context and those of the collections that will be added. */
  contexts: PlannedContext[];
  /** One line each: what qmd 2.x has and this qmd does differently, and what migrate did with it. */
  notes: string[];
}

/** What the plan asks of the disk: the real path of a folder, or why there is none. */
export type FolderProbe = (path: string) => { real: string } | { missing: string };

/** The disk itself: `realpath`, and a directory (as `addCollection`'s `realDirectory`). */
export const diskFolders: FolderProbe = (folder) => {
  try {
    const real = fs.realpathSync.native(folder);
    return fs.statSync(real).isDirectory() ? { real } : { missing: `${folder} is not a folder` };
  } catch {
    return { missing: `its folder ${folder} no longer exists` };
  }
};

/**
 * What `qmd migrate` builds from qmd 2.x's `index.yml` and index: `--dry-run` prints this plan
 * and the real run carries out this same plan, so what one promises the other does. The YAML
 * is qmd 2.x's own source of truth (it copies it into the index at each start), so its
 * collections win; the index's copy (`store_collections`) serves when there is no YAML. Each
 * collection is checked here as `addCollection` would check it (its folder, a folder another
 * collection already has, its mask, ignores and update command), so a collection that could
 * not be added is in `skipped`, with why, before anything is built. A context longer than
 * `context add` takes is BAD_ARGUMENT (nothing is built), naming where it is.
 */
export function planMigration(
  config: PeerConfig | undefined,
  index: PeerIndex | undefined,
  folders: FolderProbe = diskFolders,
): MigrationPlan {
  const notes: string[] = [];
  const fromIndex = (index?.collections ?? []).map(
    (c): PeerCollection => ({
      name: c.name,
      path: c.path,
      pattern: c.pattern,
      ignore: c.ignore,
      ...(c.update !== undefined && { update: c.update }),
      includeByDefault: c.includeByDefault,
      contexts: Object.entries(c.context).map(([prefix, text]) => ({ prefix: prefix.replace(/^\/+|\/+$/g, ''), text })),
    }),
  );
  const fromYaml = config !== undefined && config.collections.length > 0;
  const sources = fromYaml ? config.collections : fromIndex;
  const where = (what: string) =>
    fromYaml ? `${config.file}: ${what}` : `${index?.file ?? 'the index'}: its copy of index.yml, ${what}`;
  const taken = new Set<string>();
  const roots = new Map<string, PlannedCollection>();
  const collections: PlannedCollection[] = [];
  const skipped: MigrationPlan['skipped'] = [];
  const contexts: PlannedContext[] = [];
  for (const source of sources) {
    for (const { prefix, text } of source.contexts) {
      checkContext(text, where(`collections.${source.name}.context "${prefix === '' ? '/' : prefix}"`));
    }
    const name = freeName(validName(source.name), taken);
    taken.add(name);
    const documents = index?.documents[source.name];
    const planned: PlannedCollection = {
      name,
      ...(name !== source.name && { renamedFrom: source.name }),
      root: source.path,
      mask: source.pattern,
      ignore: [...source.ignore, ...PEER_EXCLUDED.filter((glob) => !source.ignore.includes(glob))],
      ...(source.update !== undefined && { update: source.update }),
      includeByDefault: source.includeByDefault,
      ...(documents !== undefined && { peerDocuments: documents }),
    };
    const why = refusal(planned, folders, roots);
    if (why !== undefined) {
      skipped.push({ name, why: printable(why) });
      continue;
    }
    collections.push(planned);
    for (const { prefix, text } of source.contexts) {
      if (text.trim() !== '') contexts.push({ place: prefix === '' ? name : `${name}/${prefix}`, text });
    }
  }
  const global = config?.globalContext ?? index?.globalContext;
  if (global !== undefined) {
    checkContext(global, where('global_context'));
    contexts.unshift({ place: '/', text: global });
  }

  if (collections.length > 0) {
    notes.push(
      `qmd 2.x never indexes vendor/, dist/ or build/ folders: each collection ignores them here too (qmd collection show NAME)`,
    );
  }
  const embed = config?.models.embed;
  if (embed !== undefined && embed !== PEER_DEFAULT_MODELS.embed) {
    notes.push(
      `index.yml embeds with ${embed}: give qmd the same with --embed-model or QMD_EMBED_MODEL (it is not stored in the index)`,
    );
  }
  for (const role of ['rerank', 'generate'] as const) {
    const model = config?.models[role];
    if (model !== undefined && model !== PEER_DEFAULT_MODELS[role]) {
      notes.push(`index.yml's models.${role} (${model}) is not carried over: qmd uses its own ${role} model`);
    }
  }
  if (config?.editorUri !== undefined) {
    notes.push(`index.yml's editor_uri is not carried over: qmd prints plain paths, without terminal links`);
  }
  if (index !== undefined && index.embedded.chunks > 0) {
    notes.push(
      `qmd 2.x's ${index.embedded.chunks} vectors are not carried over (its chunks are not ours): run qmd embed; a model file it downloaded to the shared models folder is not downloaded again`,
    );
  }
  return { collections, skipped, contexts, notes: notes.map(printable) };
}

/**
 * Why `addCollection` would refuse `planned` (the same checks, in its order), or undefined.
 * Two collections of one folder (qmd 2.x allows it, with two masks) are one here: the second
 * is skipped, and the line says how to give the first both masks.
 */
function refusal(planned: PlannedCollection, folders: FolderProbe, roots: Map<string, PlannedCollection>) {
  const folder = folders(planned.root);
  if ('missing' in folder) return folder.missing;
  const first = roots.get(folder.real);
  if (first !== undefined) {
    return `${folder.real} is already indexed as collection "${first.name}" (to index both masks there: qmd collection set-mask ${first.name} '${first.mask},${planned.mask}')`;
  }
  try {
    checkMask(planned.mask);
    for (const glob of planned.ignore) checkMask(glob);
    if (planned.update?.includes('\0')) throw new QmdError('BAD_ARGUMENT', 'An update command cannot contain NUL');
  } catch (error) {
    return errorMessage(error);
  }
  roots.set(folder.real, planned);
  return undefined;
}

/** A context `qmd context add` would take (at most `MAX_CONTEXT_CHARS`), else BAD_ARGUMENT naming where it is. */
function checkContext(text: string, where: string): void {
  const length = text.trim().length;
  if (length <= MAX_CONTEXT_CHARS) return;
  throw new QmdError(
    'BAD_ARGUMENT',
    `${printable(where)} is ${length.toLocaleString('en')} characters: a context here is at most ${MAX_CONTEXT_CHARS.toLocaleString('en')}; shorten it, then run qmd migrate again`,
  );
}

function validName(name: string): string {
  try {
    return checkCollectionName(name);
  } catch {
    return nameFromDirectory(name);
  }
}

function freeName(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
