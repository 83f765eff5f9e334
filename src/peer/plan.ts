import { checkCollectionName, nameFromDirectory } from '../store/paths.js';
import type { PeerIndex } from '../store/peer-index.js';
import type { PeerCollection, PeerConfig } from './config.js';

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
  collections: PlannedCollection[];
  contexts: PlannedContext[];
  /** One line each: what qmd 2.x has and this qmd does differently, and what migrate did with it. */
  notes: string[];
}

/**
 * What `qmd migrate` builds from qmd 2.x's `index.yml` and index. The YAML is qmd 2.x's own
 * source of truth (it copies it into the index at each start), so its collections win; the
 * index's copy (`store_collections`) serves when there is no YAML.
 */
export function planMigration(config: PeerConfig | undefined, index: PeerIndex | undefined): MigrationPlan {
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
  const sources = config !== undefined && config.collections.length > 0 ? config.collections : fromIndex;
  const taken = new Set<string>();
  const collections: PlannedCollection[] = [];
  const contexts: PlannedContext[] = [];
  for (const source of sources) {
    const name = freeName(validName(source.name), taken);
    taken.add(name);
    const documents = index?.documents[source.name];
    collections.push({
      name,
      ...(name !== source.name && { renamedFrom: source.name }),
      root: source.path,
      mask: source.pattern,
      ignore: [...source.ignore, ...PEER_EXCLUDED.filter((glob) => !source.ignore.includes(glob))],
      ...(source.update !== undefined && { update: source.update }),
      includeByDefault: source.includeByDefault,
      ...(documents !== undefined && { peerDocuments: documents }),
    });
    for (const { prefix, text } of source.contexts) {
      if (text.trim() !== '') contexts.push({ place: prefix === '' ? name : `${name}/${prefix}`, text });
    }
  }
  const global = config?.globalContext ?? index?.globalContext;
  if (global !== undefined) contexts.unshift({ place: '/', text: global });

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
  return { collections, contexts, notes };
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
