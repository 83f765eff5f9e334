/**
 * Plain mode on a Node qmd does not support: the bundle, run by an older Node, says in one line
 * which Node it needs and which it got, exits 1, and writes nothing on stdout (in `qmd mcp`,
 * stdout is the protocol). The older Node is the machine's own: the first `node` on the default
 * PATH, when it is older than 22.14 (Node 20 here); without one the test is skipped, saying so.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_RANGE, nodeMismatch, nodeSupported } from '../../src/cli/node-version.js';
import { QMD_BIN } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function olderNode(): { bin: string; version: string } | undefined {
  try {
    const bin = execFileSync('sh', ['-c', 'command -v node'], { env: { PATH: DEFAULT_PATH }, encoding: 'utf8' }).trim();
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    return nodeSupported(version) ? undefined : { bin, version };
  } catch {
    return undefined;
  }
}

const old = olderNode();

describe('the Node version check', () => {
  it('holds the same range as package.json engines', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe(NODE_RANGE);
  });

  it('accepts 22.14 and later on the 22 line and 24 and later, refuses the rest', () => {
    for (const v of ['v22.14.0', 'v22.16.0', 'v22.23.5', 'v24.0.0', 'v24.22.3', 'v25.1.0'])
      expect(nodeSupported(v), v).toBe(true);
    // 22.13 and older: N-API 9, where better-sqlite3 13's addon segfaults as it loads.
    for (const v of ['v18.20.0', 'v20.20.2', 'v22.0.0', 'v22.13.1', 'v23.11.0'])
      expect(nodeSupported(v), v).toBe(false);
    expect(nodeSupported(process.version)).toBe(true);
  });

  describe.skipIf(old === undefined)(`under the machine's older Node (${old?.version ?? 'none: skipped'})`, () => {
    for (const args of [['mcp'], ['mcp', '--shared'], ['status'], ['--version'], ['search', 'x']]) {
      it(`qmd ${args.join(' ')}: one line naming both Nodes, nothing on stdout, exit 1`, async () => {
        const child = spawnProcess(old?.bin ?? 'node', [QMD_BIN, ...args], { env: { PATH: DEFAULT_PATH } });
        try {
          child.child.stdin?.end();
          expect(await waitForExit(child)).toEqual({ code: 1, signal: null });
          await child.closed;
          expect(child.stdout()).toBe('');
          expect(child.stderr()).toBe(`${nodeMismatch(old?.version ?? '')}\n`);
          expect(child.stderr()).toContain(old?.version);
        } finally {
          child.kill();
        }
      });
    }
  });
});
