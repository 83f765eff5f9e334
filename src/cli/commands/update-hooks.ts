import { spawn } from 'node:child_process';
import type { CollectionInfo } from '../../core/types.js';
import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';

/** What ran and how it ended: the exit code (null when killed by a signal), its output. */
export interface ShellResult {
  code: number | null;
  output: string;
}

/** Runs `command` with `args` in `cwd`, stdin closed, stdout and stderr collected together. */
export type RunCommand = (command: string, args: string[], cwd: string) => Promise<ShellResult>;

/**
 * Before `qmd update` scans, each collection's update command runs in its folder (`bash -c`,
 * as qmd 2.x runs it), its output printed indented; with `--pull`, a collection with no command
 * whose folder is in a git work tree gets `git pull --ff-only` there (each work tree once).
 * The first that fails stops the update before anything is re-indexed (qmd 2.x aborts the run
 * at that collection too): UPDATE_FAILED names it and its exit code, exit 1.
 *
 * Trust: qmd 2.x asks before running commands from a project-local `.qmd/index.yml` (a cloned
 * repository's). Here a command is only ever written by the person at this account
 * (`qmd collection update-cmd`, or `qmd migrate` from their own `~/.config/qmd/index.yml`,
 * which qmd 2.x never gates either), so none is asked about.
 */
export async function runUpdateHooks(
  ctx: CliContext,
  collections: CollectionInfo[],
  flags: { pull?: boolean },
  run: RunCommand = runCommand,
): Promise<void> {
  const pulled = new Set<string>();
  for (const [i, c] of collections.entries()) {
    const step = `[${i + 1}/${collections.length}] ${c.name} (${c.mask})`;
    if (c.update !== undefined) {
      ctx.out(`${step}\n    Running update command: ${c.update}`);
      check(c, c.update, await run('bash', ['-c', c.update], c.root), ctx);
      continue;
    }
    if (!flags.pull) continue;
    const top = await run('git', ['rev-parse', '--show-toplevel'], c.root).catch(() => undefined);
    const tree = top?.code === 0 ? top.output.trim() : undefined;
    if (tree === undefined || pulled.has(tree)) continue;
    pulled.add(tree);
    ctx.out(`${step}\n    Running git pull --ff-only in ${tree}`);
    check(c, 'git pull --ff-only', await run('git', ['pull', '--ff-only'], c.root), ctx);
  }
}

function check(c: CollectionInfo, command: string, result: ShellResult, ctx: CliContext): void {
  const output = result.output.trim();
  if (output !== '')
    ctx.out(
      output
        .split('\n')
        .map((line) => `    ${line}`)
        .join('\n'),
    );
  if (result.code === 0) return;
  const how = result.code === null ? 'was killed' : `failed with exit code ${result.code}`;
  throw new QmdError(
    'UPDATE_FAILED',
    `The update command of ${c.name} (${command}) ${how}: nothing was re-indexed; fix it, or clear it with qmd collection update-cmd ${c.name}`,
  );
}

export const runCommand: RunCommand = (command, args, cwd) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', (error) =>
      reject(new QmdError('UPDATE_FAILED', `Cannot run ${command} in ${cwd}: ${error.message}`, { cause: error })),
    );
    child.on('close', (code) => resolve({ code, output }));
  });
