/**
 * `qmd update`'s update commands and `--pull` (`update-hooks.ts`), with a runner that records
 * what it was asked and answers as told; the spawned `bash -c` and `git pull` run in
 * test/e2e/peer-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { RunCommand, ShellResult } from '../../src/cli/commands/update-hooks.js';
import { runUpdateHooks } from '../../src/cli/commands/update-hooks.js';
import type { CliContext } from '../../src/cli/context.js';
import type { CollectionInfo } from '../../src/core/types.js';

function collection(name: string, extra: Partial<CollectionInfo> = {}): CollectionInfo {
  return {
    name,
    root: `/r/${name}`,
    mask: '**/*.md',
    ignore: [],
    includeByDefault: true,
    documents: 1,
    updatedAt: '',
    ...extra,
  };
}

function harness(answers: (command: string, args: string[], cwd: string) => ShellResult) {
  const out: string[] = [];
  const calls: string[] = [];
  const run: RunCommand = async (command, args, cwd) => {
    calls.push(`${cwd}: ${command} ${args.join(' ')}`);
    return answers(command, args, cwd);
  };
  const ctx = { out: (text: string) => out.push(text) } as unknown as CliContext;
  return { ctx, out, calls, run };
}

describe('runUpdateHooks', () => {
  it('runs each update command in its folder with bash -c, in order, its output indented', async () => {
    const h = harness(() => ({ code: 0, output: 'Already up to date.\n' }));
    await runUpdateHooks(
      h.ctx,
      [collection('a', { update: 'git pull' }), collection('b'), collection('c', { update: 'make' })],
      {},
      h.run,
    );
    expect(h.calls).toEqual(['/r/a: bash -c git pull', '/r/c: bash -c make']);
    expect(h.out.join('\n')).toBe(
      [
        '[1/3] a (**/*.md)',
        '    Running update command: git pull',
        '    Already up to date.',
        '[3/3] c (**/*.md)',
        '    Running update command: make',
        '    Already up to date.',
      ].join('\n'),
    );
  });

  it('stops at the first that fails, naming it and its exit code, before the next runs', async () => {
    const h = harness((_c, args) => ({ code: args[1] === 'bad' ? 3 : 0, output: '' }));
    await expect(
      runUpdateHooks(h.ctx, [collection('a', { update: 'bad' }), collection('b', { update: 'good' })], {}, h.run),
    ).rejects.toMatchObject({
      code: 'UPDATE_FAILED',
      message:
        'The update command of a (bad) failed with exit code 3: nothing was re-indexed; fix it, or clear it with qmd collection update-cmd a',
    });
    expect(h.calls).toEqual(['/r/a: bash -c bad']);
  });

  it('--pull: git pull --ff-only once per work tree, only where there is no update command', async () => {
    const h = harness((_command, args, cwd) => {
      if (args[0] === 'rev-parse')
        return cwd === '/r/plain' ? { code: 128, output: 'not a git repository' } : { code: 0, output: '/r\n' };
      return { code: 0, output: '' };
    });
    await runUpdateHooks(
      h.ctx,
      [collection('a'), collection('b'), collection('c', { update: 'make' }), collection('plain')],
      { pull: true },
      h.run,
    );
    expect(h.calls).toEqual([
      '/r/a: git rev-parse --show-toplevel',
      '/r/a: git pull --ff-only',
      '/r/b: git rev-parse --show-toplevel',
      '/r/c: bash -c make',
      '/r/plain: git rev-parse --show-toplevel',
    ]);
    // Without --pull, nothing but the update command.
    const quiet = harness(() => ({ code: 0, output: '' }));
    await runUpdateHooks(quiet.ctx, [collection('a'), collection('c', { update: 'make' })], {}, quiet.run);
    expect(quiet.calls).toEqual(['/r/c: bash -c make']);
  });
});
