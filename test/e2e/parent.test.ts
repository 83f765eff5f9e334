/**
 * Parent death and the orphan test, with real process trees:
 * test → intermediate parent (an MCP client, `fixtures/intermediate-parent.mjs`) → qmd mcp,
 * and sometimes a sibling `sleep` holding the write end of qmd's stdin, as a grandchild that
 * inherited the pipe does in real life.
 *
 * Once its parent is dead, qmd is nobody's child here, so its exit code cannot be read from a
 * wait status. What is observable: its own report (`Shutdown complete …: exit 0`, the code
 * it set), no watchdog line (nothing forced the exit), and its stderr reaching EOF (qmd held
 * the last write end of that pipe: EOF means it has exited).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readIdentity } from '../../src/serve/daemon/proc.js';
import { within } from '../support/bounded.js';
import { indexedWorkspace, QMD_BIN, qmdEnv } from '../support/qmd.js';
import { type Exit, type Spawned, spawnProcess, waitForExit } from '../support/spawn.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/intermediate-parent.mjs', import.meta.url));

const ws = indexedWorkspace();

interface Tree {
  parent: Spawned;
  pids: { parent: number; qmd: number; holder: number | null };
  /** Resolves when the last writer of the parent's stderr pipe — qmd — is gone. */
  stderrClosed: Promise<void>;
  /** qmd's exit as its live parent saw it (handoff mode only). */
  qmdExit: Promise<Exit>;
}

/** Resolves with the first whole JSON line on the child's stdout that `pick` accepts. */
function jsonLine<T>(p: Spawned, pick: (value: Record<string, unknown>) => boolean, what: string): Promise<T> {
  const lines = () => p.stdout().split('\n').slice(0, -1);
  return p.waitFor(
    () =>
      lines()
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find(pick) as T | undefined,
    what,
  );
}

/** Waits for qmd, which is not our child: its end is an event of the tree (`stderrClosed`, `qmdExit`). */
function qmdGone<T>(event: Promise<T>, p: Spawned): Promise<T> {
  return within(event, () => `qmd to exit (else an orphan); stderr:\n${p.stderr()}`);
}

async function startTree(mode: 'shared' | 'handoff' | 'alone'): Promise<Tree> {
  const parent = spawnProcess(process.execPath, [FIXTURE, QMD_BIN, mode], { env: qmdEnv(ws.index) });
  const stderrClosed = new Promise<void>((resolve) => parent.child.stderr?.once('end', resolve));
  const qmdExit = jsonLine<{ exit: Exit }>(parent, (v) => 'exit' in v, "qmd's exit, as its parent saw it").then(
    (v) => v.exit,
  );
  qmdExit.catch(() => {});
  const pids = await jsonLine<Tree['pids']>(parent, (v) => 'qmd' in v, 'the pids of the tree');
  return { parent, pids, stderrClosed, qmdExit };
}

/** SIGKILL a pid from the tree, only while it is still the process we started. */
function killIfOurs(pid: number | null | undefined, program: string): void {
  if (!pid) return;
  const identity = readIdentity(pid);
  if (identity?.cmdline.some((arg) => arg.includes(program))) process.kill(pid, 'SIGKILL');
}

function cleanup(tree: Tree | undefined): void {
  killIfOurs(tree?.pids.holder, 'sleep');
  killIfOurs(tree?.pids.qmd, QMD_BIN);
  tree?.parent.kill();
}

describe('the parent goes away', () => {
  it('parent SIGKILLed while a sibling keeps stdin open: parent.gone ends it, exit 0', async () => {
    let tree: Tree | undefined;
    try {
      tree = await startTree('shared');
      tree.parent.child.kill('SIGKILL');
      expect(await waitForExit(tree.parent)).toEqual({ code: null, signal: 'SIGKILL' });

      await qmdGone(tree.stderrClosed, tree.parent);
      const stderr = tree.parent.stderr();
      expect(stderr).toContain('Shutting down (parent exited)...');
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: parent exited: drained, all steps ok, exit 0/);
      expect(stderr).not.toContain('held by');
      // The point of the test: stdin never reached EOF, its other writer is still alive.
      expect(readIdentity(tree.pids.holder ?? -1)).not.toBeNull();
      expect(stderr).not.toContain('stdin closed');
    } finally {
      cleanup(tree);
    }
  });

  it('the only other holder of stdin SIGKILLed while the parent lives: EOF ends it, exit 0', async () => {
    let tree: Tree | undefined;
    try {
      tree = await startTree('handoff');
      killIfOurs(tree.pids.holder, 'sleep');

      // The parent is alive and reports its child's exit: a real exit status, not by signal.
      expect(await qmdGone(tree.qmdExit, tree.parent)).toEqual({ code: 0, signal: null });
      const stderr = tree.parent.stderr();
      expect(stderr).toContain('Shutting down (stdin closed)...');
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(stderr).not.toContain('parent exited');
    } finally {
      cleanup(tree);
    }
  });

  it('the client (parent and only stdin holder) SIGKILLed: no orphan, one teardown, exit 0', async () => {
    let tree: Tree | undefined;
    try {
      tree = await startTree('alone');
      tree.parent.child.kill('SIGKILL');
      await waitForExit(tree.parent);

      await qmdGone(tree.stderrClosed, tree.parent);
      const stderr = tree.parent.stderr();
      // Both facts are true at once (EOF and a new parent); whichever the server sees first
      // starts the one teardown, and the other source is detached by then.
      expect(stderr.match(/Shutting down \((stdin closed|parent exited)\)\.\.\./g)).toHaveLength(1);
      expect(stderr).toMatch(
        /Shutdown complete in [\d.]+ ms: (stdin closed|parent exited): drained, all steps ok, exit 0/,
      );
      expect(stderr).not.toContain('held by');
    } finally {
      cleanup(tree);
    }
  });
});
