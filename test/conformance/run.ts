/**
 * `npm run test:conformance`: the MCP conformance suite (pinned in ./package.json) against the
 * built `qmd mcp --http`, both eras: the 2025 legs (`--suite active`) and the 2026-07-28 leg
 * (`--suite all --spec-version 2026-07-28`), each with a baseline of the scenarios qmd fails by
 * design (they need the suite's "everything server" fixture; the reasons are in the files).
 * The runner fails on an unexpected failure and on a stale baseline entry alike. Then the
 * server is stopped with SIGTERM and must leave through the machine with exit 0.
 *
 * The suite needs Node ≥ 22 (`fs.globSync`), as qmd does: it runs on the Node running this.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QMD_BIN, qmdEnv } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const suite = join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const legs = [
  { name: '2025 (active suite)', args: ['--suite', 'active'], baseline: 'expected-failures.yml' },
  {
    name: '2026-07-28 (all)',
    args: ['--suite', 'all', '--spec-version', '2026-07-28'],
    baseline: 'expected-failures.2026-07-28.yml',
  },
];

async function main(): Promise<number> {
  if (!existsSync(suite)) {
    console.error('the conformance suite is not installed: run `npm ci --prefix test/conformance`');
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'qmd-conformance-'));
  try {
    const notes = join(dir, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'hello.md'), '# Hello\n\nA note for the conformance suite.\n');
    const env = qmdEnv(join(dir, 'index.sqlite'));
    const added = spawnSync(process.execPath, [QMD_BIN, 'collection', 'add', notes, '--name', 'notes'], { env });
    if (added.status !== 0) throw new Error(`collection add failed: ${added.stderr}`);

    const server = spawnProcess(process.execPath, [QMD_BIN, 'mcp', '--http', '--port', '0'], { env });
    try {
      await server.waitForStderr(/Listening on http:\/\/\S+/);
      const url = /Listening on (http:\/\/\S+)/.exec(server.stderr())?.[1] ?? '';
      let failed = 0;
      for (const leg of legs) {
        console.log(`\n━━ conformance ${leg.name} against ${url}`);
        const code = await run(process.execPath, [
          suite,
          'server',
          '--url',
          url,
          ...leg.args,
          '--expected-failures',
          join(here, leg.baseline),
          '-o',
          join(dir, `results-${leg.baseline}`),
        ]);
        if (code !== 0) failed++;
      }
      server.child.kill('SIGTERM');
      const exit = await waitForExit(server);
      if (exit.code !== 0) {
        console.error(`qmd mcp --http exited ${JSON.stringify(exit)} after SIGTERM:\n${server.stderr()}`);
        failed++;
      }
      console.log(failed === 0 ? '\nconformance: every leg as expected' : `\nconformance: ${failed} problem(s)`);
      return failed === 0 ? 0 : 1;
    } finally {
      server.kill();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The suite's own run: minutes, its output straight to ours, no bound but the suite's. */
async function run(command: string, args: string[]): Promise<number> {
  const exit = await spawnProcess(command, args, { stdio: ['ignore', 'inherit', 'inherit'] }).exited;
  return exit.code ?? 1;
}

process.exitCode = await main();
