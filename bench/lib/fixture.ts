import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyModel } from '../../test/support/gguf.js';
import { type CachedCorpus, cachedCorpus } from './corpus.js';
import { CONTENDERS, NAIVE_SERVER, QMD_BIN, TMP, TSX_LOADER } from './paths.js';
import { PEER_BIN, PEER_VERSION, peerEnv, peerUnavailable } from './peer.js';
import { isAlive } from './proc.js';
import { lastLine, qmdEnv, runCommand, runQmd, runQmdOk } from './qmd.js';
import type { ServerCommand } from './rpc-child.js';

/** What the spawned-server benchmarks share: one index, one query, and the model if it can run. */
export interface QmdFixture {
  corpus: CachedCorpus;
  /** A BM25 index of `corpus`, built by `qmd collection add` for this run. */
  index: string;
  /** What "after a query" asks: two common words. */
  query: string;
  /** The embedded index and the tiny model, or why there is none. */
  embedded: { index: string; model: string; notes: number } | { skip: string };
  /** The peer's environment, its index built from the same corpus, or why it cannot run here. */
  peer: { env: NodeJS.ProcessEnv } | { skip: string };
}

export const NOT_AVAILABLE = 'not available yet';

/** Notes in the embedded index of the warm-model contenders. */
const EMBEDDED_NOTES = 10;

/**
 * Whether this build can embed: `qmd embed` is a command and `QMD_EMBED_MODEL` is honoured
 * (a build without embeddings skips the warm-model contenders). Checked from the built
 * binary's help.
 */
export async function embeddingSupport(): Promise<{ ok: true } | { ok: false; why: string }> {
  if (!existsSync(QMD_BIN)) return { ok: false, why: `${QMD_BIN} is missing (npm run build)` };
  const help = await runQmd(['--help'], qmdEnv(), 30_000);
  if (!/^\s+embed\b/m.test(help.stdout)) return { ok: false, why: 'this build has no `qmd embed`' };
  return { ok: true };
}

/** The tiny random-weight GGUF model of the tests (~400 KB), written once under `bench/.tmp/`. */
export function tinyModel(): string {
  const file = join(TMP, 'tiny-embed.gguf');
  if (!existsSync(file)) {
    mkdirSync(TMP, { recursive: true });
    writeTinyModel(file);
  }
  return file;
}

const fixtures = new Map<string, Promise<QmdFixture>>();

/** Built once per process and size: the first benchmark that needs it pays. */
export function qmdFixture(quick: boolean, log: (line: string) => void): Promise<QmdFixture> {
  const files = quick ? 100 : 1000;
  const key = String(files);
  let fixture = fixtures.get(key);
  if (fixture === undefined) {
    fixture = buildFixture(files, log);
    fixtures.set(key, fixture);
  }
  return fixture;
}

/** Fixture directories of runs that died without cleaning up (their pid is gone). */
function removeStaleFixtures(): void {
  if (!existsSync(TMP)) return;
  for (const entry of readdirSync(TMP)) {
    const pid = Number(/^fixture-\d+-(\d+)$/.exec(entry)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid)) {
      rmSync(join(TMP, entry), { recursive: true, force: true });
    }
  }
}

async function buildFixture(files: number, log: (line: string) => void): Promise<QmdFixture> {
  removeStaleFixtures();
  const corpus = cachedCorpus(files);
  const dir = join(TMP, `fixture-${files}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const index = join(dir, 'index.sqlite');
  log(`fixture: indexing ${files} notes`);
  await runQmdOk(['collection', 'add', corpus.dir, '--name', 'notes'], qmdEnv({ QMD_INDEX: index }));
  const query = `${corpus.common[0]} ${corpus.common[1]}`;

  const support = await embeddingSupport();
  let embedded: QmdFixture['embedded'];
  if (!support.ok) {
    embedded = { skip: support.why };
  } else {
    // A small corpus of its own: what matters is a loaded model that has run, not how many
    // vectors there are, and embedding with the tiny model costs 60–400 ms a chunk on busy cores.
    const small = cachedCorpus(EMBEDDED_NOTES);
    const model = tinyModel();
    const embeddedIndex = join(dir, 'embedded.sqlite');
    const env = qmdEnv({ QMD_INDEX: embeddedIndex, QMD_EMBED_MODEL: model });
    log(`fixture: indexing and embedding ${EMBEDDED_NOTES} notes with the tiny model`);
    await runQmdOk(['collection', 'add', small.dir, '--name', 'notes'], env);
    // One thread builds the fixture fastest on busy cores; the measured servers keep the default.
    const run = await runQmd(['embed'], { ...env, QMD_EMBED_THREADS: '1' });
    embedded =
      run.code === 0
        ? { index: embeddedIndex, model, notes: EMBEDDED_NOTES }
        : { skip: `qmd embed failed (${run.code ?? run.signal}): ${lastLine(run.stderr)}` };
  }
  return { corpus, index, query, embedded, peer: await peerFixture(corpus.dir, join(dir, 'peer'), log) };
}

/** The peer indexes the same notes with its own `collection add`, in a home of its own. */
async function peerFixture(notes: string, home: string, log: (line: string) => void): Promise<QmdFixture['peer']> {
  const skip = peerUnavailable();
  if (skip !== undefined) return { skip };
  const env = peerEnv(home);
  log(`fixture: indexing the notes with the peer (qmd ${PEER_VERSION})`);
  const run = await runCommand(process.execPath, [PEER_BIN, 'collection', 'add', notes, '--name', 'notes'], env);
  return run.code === 0
    ? { env }
    : { skip: `its collection add failed (${run.code ?? run.signal}): ${lastLine(run.stderr)}` };
}

/** The floor: `bench/contenders/floor.mjs`. */
export function floorServer(): ServerCommand {
  return { command: process.execPath, args: [join(CONTENDERS, 'floor.mjs')] };
}

/** The bare SDK server: `bench/contenders/sdk-server.mjs`. */
export function sdkServer(): ServerCommand {
  return { command: process.execPath, args: [join(CONTENDERS, 'sdk-server.mjs')] };
}

/** The peer's `qmd mcp` in its own environment. */
export function peerServer(env: NodeJS.ProcessEnv): ServerCommand {
  return { command: process.execPath, args: [PEER_BIN, 'mcp'], env };
}

/** `qmd mcp` (the built binary) on `index`, with `env` on top of a clean QMD_* environment. */
export function qmdServer(index: string, env: Record<string, string> = {}): ServerCommand {
  return {
    command: process.execPath,
    args: [QMD_BIN, 'mcp'],
    env: qmdEnv({ QMD_INDEX: index, ...env }),
  };
}

/**
 * `qmd mcp` with the naive dispose order (`bench/contenders/naive-server.ts`, from source): the
 * same environment as `qmdServer`, and `order` as the contender takes it.
 */
export function naiveServer(index: string, env: Record<string, string> = {}, order: 'ordered' | 'all' = 'ordered') {
  return {
    command: process.execPath,
    args: ['--import', TSX_LOADER, NAIVE_SERVER, order],
    env: qmdEnv({ QMD_INDEX: index, ...env }),
  } satisfies ServerCommand;
}
