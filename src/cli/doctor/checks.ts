import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { openStore, type Store } from '../../core/index.js';
import { QmdError } from '../../errors.js';
import { loadSqliteVec, Sqlite } from '../../store/sqlite.js';
import type { StatusReport } from '../../store/types.js';
import { NODE_RANGE, nodeSupported } from '../node-version.js';
import { environmentOverrides } from './environment.js';
import type { Check } from './report.js';

/**
 * The peer's checks (qmd 2.8.3's `doctor`), ours: the runtime, SQLite, sqlite-vec, the index
 * and its collections, embedding freshness, the environment, the device. Nothing here loads
 * node-llama-cpp unless `--probe` asks for the device (docs/design.md §6, "qmd doctor").
 */

export function runtimeCheck(version = process.version): Check {
  return nodeSupported(version)
    ? { name: 'Node', mark: 'ok', detail: `${version} (qmd needs ${NODE_RANGE})` }
    : {
        name: 'Node',
        mark: 'fail',
        detail: `${version} is not supported (qmd needs ${NODE_RANGE})`,
        next: 'install Node 24 (npm i -g node@24, or nvm install 24) and run qmd with it',
      };
}

/** SQLite as better-sqlite3 ships it, and sqlite-vec loaded into it: an in-memory database, nothing else touched. */
export function sqliteChecks(): Check[] {
  let db: Sqlite | undefined;
  try {
    db = new Sqlite(':memory:', { allowExtension: true });
  } catch (error) {
    return [
      {
        name: 'SQLite',
        mark: 'fail',
        detail: `better-sqlite3 does not load: ${message(error)}`,
        next: 'reinstall qmd (npm i -g qmd-search) with the Node you run it with',
      },
    ];
  }
  try {
    const version = db.value<string>('SELECT sqlite_version()');
    const checks: Check[] = [
      { name: 'SQLite', mark: 'ok', detail: `${version} (better-sqlite3 ${packageVersion('better-sqlite3')})` },
    ];
    try {
      loadSqliteVec(db);
      checks.push({ name: 'sqlite-vec', mark: 'ok', detail: String(db.value('SELECT vec_version()')) });
    } catch (error) {
      checks.push({
        name: 'sqlite-vec',
        mark: 'warn',
        detail: `does not load (${message(error)}): vector searches scan every vector instead`,
        next: 'reinstall qmd with its optional dependencies (npm i -g qmd-search)',
      });
    }
    return checks;
  } finally {
    db.close();
  }
}

/** What the index is: readable and whole (quick_check), its collections, and what is not yet embedded. */
export interface IndexFindings {
  checks: Check[];
  /** The index's report, when it could be read. */
  status?: StatusReport;
}

export async function indexChecks(indexPath: string): Promise<IndexFindings> {
  let store: Store;
  try {
    store = openStore(indexPath, { readonly: true, quickCheck: true });
  } catch (error) {
    return { checks: [indexProblem(error)] };
  }
  try {
    const status = store.status();
    const mb = (status.sizeBytes / 1024 / 1024).toFixed(1);
    const checks: Check[] = [
      { name: 'index', mark: 'ok', detail: `${mb} MB, ${status.documents} documents; quick_check: ok` },
      collectionsCheck(status),
      freshnessCheck(status),
    ];
    return { checks, status };
  } catch (error) {
    return { checks: [indexProblem(error)] };
  } finally {
    await store.close().catch(() => {});
  }
}

function indexProblem(error: unknown): Check {
  if (!(error instanceof QmdError)) return { name: 'index', mark: 'fail', detail: message(error) };
  const [detail, next] = splitNext(error.message);
  if (error.code === 'INDEX_MISSING') {
    // Not wrong: nothing indexed yet.
    return { name: 'index', mark: 'warn', code: error.code, detail, next: next ?? 'qmd collection add DIR' };
  }
  return { name: 'index', mark: 'fail', code: error.code, detail, ...(next !== undefined && { next }) };
}

/** `The index X is damaged (…); move it away and …` → the finding, and what to do. */
function splitNext(text: string): [string, string | undefined] {
  const at = text.lastIndexOf('; ');
  const colon = text.indexOf(': ');
  if (at > 0) return [text.slice(0, at), text.slice(at + 2)];
  if (colon > 0) return [text.slice(0, colon), text.slice(colon + 2)];
  return [text, undefined];
}

function collectionsCheck(status: StatusReport): Check {
  const { collections } = status;
  const gone = collections.filter((c) => !existsSync(c.root));
  const items = collections.map(
    (c) =>
      `${c.name}: ${c.documents} document${c.documents === 1 ? '' : 's'}, ${c.root}${existsSync(c.root) ? '' : ' (MISSING on disk)'}`,
  );
  if (collections.length === 0) {
    return { name: 'collections', mark: 'warn', detail: 'none', next: 'qmd collection add DIR' };
  }
  const count = `${collections.length} collection${collections.length === 1 ? '' : 's'}`;
  if (gone.length === 0) return { name: 'collections', mark: 'ok', detail: count, items };
  return {
    name: 'collections',
    mark: 'warn',
    detail: `${count}; the folder of ${gone.map((c) => c.name).join(', ')} is gone (its notes stay searchable until qmd update)`,
    items,
    next: `put the folder back, or qmd collection remove ${gone[0]?.name}`,
  };
}

function freshnessCheck(status: StatusReport): Check {
  const n = status.needsEmbedding;
  const e = status.embeddings;
  const vectors = `${e.embeddedChunks}/${e.chunks} chunks embedded (vectors: ${e.vectorBackend})`;
  if (n === 0) return { name: 'embedding freshness', mark: 'ok', detail: `every note embedded; ${vectors}` };
  return {
    name: 'embedding freshness',
    mark: 'warn',
    detail: `${n} note${n === 1 ? '' : 's'} not yet embedded (searches find them by words only); ${vectors}`,
    next: 'qmd embed',
  };
}

export function environmentCheck(env: NodeJS.ProcessEnv): Check {
  const overrides = environmentOverrides(env);
  return {
    name: 'environment overrides',
    mark: 'ok',
    detail: overrides.length === 0 ? 'none set' : `${overrides.length} set`,
    items: overrides.map((o) => `${o.name}=${o.value}: ${o.means}`),
  };
}

/**
 * The device, without loading llama.cpp: the backend asked for and the prebuilt llama.cpp
 * binaries installed for this platform. `probed` is the backend llama.cpp gave (`--probe`).
 */
export function deviceCheck(gpu: string, gpuSource: string, probed?: { line: string; error?: string }): Check {
  const installed = prebuiltBackends();
  const items = [
    `prebuilt llama.cpp binaries for ${process.platform}-${process.arch}: ${installed.length === 0 ? 'none found' : installed.join(', ')}`,
  ];
  if (probed === undefined) {
    return {
      name: 'device',
      mark: 'ok',
      detail: `--gpu ${gpu} (${gpuSource}); llama.cpp not loaded (qmd doctor --probe loads it to see the device)`,
      items,
    };
  }
  if (probed.error !== undefined) {
    return {
      name: 'device',
      mark: 'fail',
      detail: `--gpu ${gpu}: llama.cpp does not load: ${probed.error}`,
      items,
      next: 'qmd --gpu off doctor --probe (the CPU backend), then reinstall qmd if that fails too',
    };
  }
  return { name: 'device', mark: 'ok', detail: probed.line, items };
}

/** `linux-x64`, `linux-x64-cuda`…: node-llama-cpp's prebuilt binaries for this platform, found on disk. */
function prebuiltBackends(): string[] {
  try {
    const entry = createRequire(import.meta.url).resolve('node-llama-cpp');
    const at = entry.lastIndexOf(`${sep}node_modules${sep}`);
    if (at < 0) return [];
    const scope = join(entry.slice(0, at), 'node_modules', '@node-llama-cpp');
    const prefix = `${process.platform === 'win32' ? 'win' : process.platform === 'darwin' ? 'mac' : process.platform}-${process.arch}`;
    return readdirSync(scope)
      .filter((name) => name === prefix || name.startsWith(`${prefix}-`))
      .filter((name) => existsSync(join(scope, name, 'bins')) || existsSync(join(scope, name, 'package.json')));
  } catch {
    return [];
  }
}

function packageVersion(name: string): string {
  try {
    const require = createRequire(import.meta.url);
    let dir = dirname(require.resolve(name));
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      const file = join(dir, 'package.json');
      if (existsSync(file)) {
        const pkg = require(file) as { name?: string; version?: string };
        if (pkg.name === name) return pkg.version ?? '?';
      }
    }
  } catch {
    // Bundled differently: the version is not essential.
  }
  return '?';
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
