import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess } from './spawn.js';

/**
 * qmd 2.8.3, the peer, as `npm run peer:install` installs it (test/peer/package.json): its
 * CLI entry, run by the Node running the tests (it runs on 22 and 24). Without its optional
 * llama.cpp binaries and sqlite-vec it is BM25-only (it says so once on stderr: "Cannot find
 * package 'sqlite-vec-linux-x64'"), which is all these tests ask of it.
 */
export const PEER_ENTRY = fileURLToPath(new URL('../peer/node_modules/@tobilu/qmd/dist/cli/qmd.js', import.meta.url));

// A test that needs the peer fails, with what to run, rather than skipping unseen.
if (!existsSync(PEER_ENTRY)) {
  throw new Error(`qmd 2.8.3 is not installed for the tests: run npm run peer:install (${PEER_ENTRY} is missing)`);
}

/**
 * One home for the peer and for us, as a person who has used qmd 2.x has: HOME and the XDG
 * folders inside `dir`, no INDEX_PATH and no QMD_* of the test run's.
 */
export function sharedHome(dir: string) {
  const home = join(dir, 'home');
  const config = join(dir, 'config');
  const cache = join(dir, 'cache');
  for (const d of [home, config, cache]) mkdirSync(d, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('QMD_') && k !== 'INDEX_PATH') env[k] = v;
  return {
    env: { ...env, HOME: home, XDG_CONFIG_HOME: config, XDG_CACHE_HOME: cache, NO_COLOR: '1' },
    /** qmd 2.x's files. */
    peerIndex: join(cache, 'qmd', 'index.sqlite'),
    peerConfig: join(config, 'qmd', 'index.yml'),
    /** Ours, by default. */
    ourIndex: join(cache, 'qmd', 'indexes', 'index.sqlite'),
  };
}

/** Runs the peer's CLI to completion; `cwd` matters to its `context add` and `ls`. */
export async function runPeer(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnProcess(process.execPath, [PEER_ENTRY, ...args], { env, ...(cwd !== undefined && { cwd }) });
  p.child.stdin?.end();
  const exit = await p.closed;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}
