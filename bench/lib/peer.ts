import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TMP } from './paths.js';

/**
 * The peer: qmd 2.8.3 (`@tobilu/qmd` on npm), the server this project measures itself against.
 * Bench-only and never committed: `npm run bench:runtime -- --node N` (bench/runtime.ts)
 * installs it into `bench/.tmp/peer-nodeN` with that Node, its native addons (better-sqlite3)
 * built against its headers, and points `QMD_BENCH_PEER_DIR` there. It needs Node ≥ 22 (it
 * segfaults on 20, lifecycle.md §3); elsewhere its rows say why they are empty.
 */
export const PEER_VERSION = '2.8.3';
export const PEER_PACKAGE = `@tobilu/qmd@${PEER_VERSION}`;
export const PEER_DIR = process.env.QMD_BENCH_PEER_DIR || join(TMP, `peer-node${process.versions.node.split('.')[0]}`);
/** Its `bin`: a launcher that re-spawns node on the real server (the child gets our pipes). */
export const PEER_BIN = join(PEER_DIR, 'node_modules/@tobilu/qmd/bin/qmd');

/** Why the peer cannot run in this process's Node, or undefined when it can. */
export function peerUnavailable(): string | undefined {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) return `needs Node 22 (this is ${process.version}): npm run bench:runtime -- --node 22`;
  if (!existsSync(PEER_BIN))
    return `not installed in ${PEER_DIR}: npm run bench:runtime -- --node ${process.versions.node.split('.')[0]} installs it`;
  return undefined;
}

/**
 * The peer's environment, shut inside `home`: it keeps its collections in
 * `$XDG_CONFIG_HOME/qmd/index.yml`, its index at `INDEX_PATH` (else under `$XDG_CACHE_HOME` —
 * the same `qmd/index.sqlite` as ours, where it drops our `collections` table), and models under
 * `~/.cache`. No QMD_* setting of ours is passed on.
 */
export function peerEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('QMD_')) env[key] = value;
  for (const dir of ['home', 'cache', 'config']) mkdirSync(join(home, dir), { recursive: true });
  return {
    ...env,
    HOME: join(home, 'home'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_CONFIG_HOME: join(home, 'config'),
    INDEX_PATH: join(home, 'index.sqlite'),
  };
}
