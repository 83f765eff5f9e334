/**
 * Tests that run something as another local user (a throwaway account the test creates with
 * useradd and removes with userdel, commands run through runuser): that user must be able to
 * reach what it runs. On a clean clone under a folder only its owner can enter (a 0700
 * temporary directory, issue 34), it cannot: `runuser … node` fails with "Permission denied"
 * before qmd even starts. So Node and the build are used where they are when every folder on
 * their path lets others through, and otherwise hard-linked into a fresh folder under the
 * system's temporary directory (a link costs no copy, and a file's own mode still decides who
 * reads it). Where neither works (no root, no useradd, another file system), the tests are
 * skipped with the reason: they never fail because of where the checkout lives.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import { QMD_BIN } from './qmd.js';

/** Node and the built qmd where another user can run them, and a folder it can reach for the test's files. */
export interface Reachable {
  node: string;
  qmd: string;
  /** A fresh folder (0755) under a path others can enter: put what that user must read here. */
  scratch: string;
  /** How they got there: `in place`, or `hard links in …`. */
  how: string;
}

/** The checkout: where `dist/`, `node_modules/` and `package.json` are. */
const CHECKOUT = resolve(dirname(QMD_BIN), '..');

/** Whether a user who is neither the owner nor in the group can reach `path` (`x`: run it or enter it; `r`: read it). */
export function othersCan(path: string, what: 'r' | 'x'): boolean {
  const target = resolve(path);
  try {
    for (let dir = dirname(target); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
      if (dir === parse(dir).root) break;
    }
    return (statSync(target).mode & (what === 'x' ? 0o001 : 0o004)) !== 0;
  } catch {
    return false;
  }
}

/** The first folder on the way to `path` that others cannot enter, for a skip's reason. */
function firstClosed(path: string): string {
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) return `${dir} (mode ${(statSync(dir).mode & 0o777).toString(8)})`;
    } catch {
      return dir;
    }
    if (dir === parse(dir).root) return path;
  }
}

const ok = (command: string) => spawnSync(command, ['--help'], { stdio: 'ignore' }).status === 0;

let prepared: Reachable | { skip: string } | undefined;

/**
 * Node, qmd and a scratch folder another user can reach, or why the tests cannot run here.
 * Decided once per test file, when it is collected (a `describe.skipIf` needs it then); the
 * hard links are removed when the process exits.
 */
export function reachableByOthers(): Reachable | { skip: string } {
  prepared ??= prepare();
  return prepared;
}

function prepare(): Reachable | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'needs root, to create a throwaway account' };
  for (const command of ['useradd', 'userdel', 'runuser']) {
    if (!ok(command)) return { skip: `needs ${command}` };
  }
  const scratch = scratchFolder();
  if ('skip' in scratch) return scratch;
  const inPlace =
    othersCan(process.execPath, 'x') &&
    othersCan(QMD_BIN, 'r') &&
    othersCan(join(CHECKOUT, 'node_modules', 'sqlite-vec'), 'x');
  if (inPlace) return { node: process.execPath, qmd: QMD_BIN, scratch: scratch.dir, how: 'in place' };
  // Hard links into a folder others can enter: nothing copied, same file modes.
  const links = join(scratch.dir, 'runtime');
  mkdirSync(join(links, 'node'), { recursive: true });
  mkdirSync(join(links, 'qmd'), { recursive: true });
  const node = join(links, 'node', 'node');
  const linked = [
    spawnSync('cp', ['-l', process.execPath, node], { encoding: 'utf8' }),
    spawnSync(
      'cp',
      [
        '-al',
        join(CHECKOUT, 'dist'),
        join(CHECKOUT, 'node_modules'),
        join(CHECKOUT, 'package.json'),
        join(links, 'qmd'),
      ],
      { encoding: 'utf8' },
    ),
  ].find((run) => run.status !== 0);
  if (linked !== undefined) {
    return {
      skip: `${firstClosed(QMD_BIN)} keeps other users out of the checkout, and it cannot be hard-linked to ${links} (${linked.stderr.trim().split('\n')[0]})`,
    };
  }
  for (const dir of [links, join(links, 'node'), join(links, 'qmd')]) chmodSync(dir, 0o755);
  const qmd = join(links, 'qmd', 'dist', 'qmd.mjs');
  if (!othersCan(node, 'x') || !othersCan(qmd, 'r')) {
    return { skip: `hard links in ${links} are still out of other users' reach (the files' own modes)` };
  }
  return { node, qmd, scratch: scratch.dir, how: `hard links in ${links}` };
}

/** A fresh 0755 folder others can enter: under the temporary directory, else under /tmp. */
function scratchFolder(): { dir: string } | { skip: string } {
  for (const parent of new Set([tmpdir(), '/tmp'])) {
    if (!existsSync(parent) || !othersCan(parent, 'x')) continue;
    const dir = mkdtempSync(join(parent, 'qmd-other-user-'));
    chmodSync(dir, 0o755);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { dir };
  }
  return { skip: `no temporary folder other users can enter (${firstClosed(join(tmpdir(), 'x'))})` };
}

/** A throwaway account: made by `create()`, removed by `remove()` (call it in `afterAll`). */
export class ThrowawayUser {
  private constructor(
    readonly name: string,
    readonly uid: number,
  ) {}

  /** `useradd` a fresh account with no home and no login shell. */
  static create(prefix: string): ThrowawayUser {
    const name = `${prefix}${Math.random().toString(16).slice(2, 8)}`;
    const made = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name], {
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`useradd ${name}: ${made.stderr}`);
    const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
    return new ThrowawayUser(name, uid);
  }

  /** The argument list that runs `command args…` as this user. */
  argv(command: string, args: readonly string[]): [string, string[]] {
    return ['runuser', ['-u', this.name, '--', command, ...args]];
  }

  /** Runs `command args…` as this user, to completion. */
  run(command: string, args: readonly string[], env?: NodeJS.ProcessEnv) {
    const [runuser, argv] = this.argv(command, args);
    return spawnSync(runuser, argv, { encoding: 'utf8', ...(env && { env }) });
  }

  remove(): void {
    spawnSync('userdel', [this.name]);
  }
}
