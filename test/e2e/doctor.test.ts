/**
 * `qmd doctor` as a person runs it, against real processes: a healthy index served by a shared
 * server and a relay with its client (exit 0, both listed with their roles and the client's
 * name), two shared servers for one index (named, with the command that fixes it, exit 1), a
 * server that does not answer (bounded, exit 1), what a SIGKILLed server leaves behind (its
 * sockets and its record: named, the fix removes them, exit 0 after it), and a damaged index
 * beside a model file that is a web page (INDEX_CORRUPT; `qmd pull --refresh`; exit 1).
 *
 * The servers run in places of this file's own (`QMD_TEST_LEGACY_PLACE` with its own
 * `XDG_RUNTIME_DIR`, as test/e2e/shared-places.test.ts plays an older qmd), and doctor looks in
 * those alone (`QMD_TEST_PLACES`, read only by doctor, only for tests): other test files run
 * their servers in `/tmp/qmd-<uid>` at the same time, and this file must see only its own.
 */
import {
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPaths } from '../../src/relay/paths.js';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace, textOf } from '../support/qmd.js';
import type { Spawned } from '../support/spawn.js';
import { eventually, isAlive, sharedServerPids } from './fixtures/shared.js';

const NOTES = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  'kiln.md': '# Kiln\n\nA kiln fires clay at 1200 degrees.\n',
};
const ws = tempWorkspace(NOTES);
const runtimeA = mkdtempSync(join(tmpdir(), 'qmd-doctor-a-'));
const runtimeB = mkdtempSync(join(tmpdir(), 'qmd-doctor-b-'));
const placeA = join(runtimeA, 'qmd');
const placeB = join(runtimeB, 'qmd');
const cache = join(ws.dir, 'cache');

/** A client's environment in place A or B; doctor looks in both and nowhere else. */
const envIn = (runtime: string): NodeJS.ProcessEnv =>
  qmdEnv(ws.index, {
    XDG_RUNTIME_DIR: runtime,
    QMD_TEST_LEGACY_PLACE: '1',
    QMD_TEST_PLACES: `${placeA}:${placeB}`,
    QMD_SHARED_IDLE_MS: '60000',
    // Models looked for here (none), not in the cache every test shares.
    XDG_CACHE_HOME: cache,
  });

interface Connected {
  relay: Spawned;
  client: Client;
}
const relays: Spawned[] = [];

async function connect(env: NodeJS.ProcessEnv): Promise<Connected> {
  const relay = spawnMcp(env, ['--shared']);
  relays.push(relay);
  const client = new Client({ name: 'doctor-test', version: '1.2.3' });
  await client.connect(new ChildTransport(relay.child));
  // Served: the relay has its shared server.
  expect(textOf(await client.callTool({ name: 'status', arguments: {} }))).toContain('2 documents');
  return { relay, client };
}

/** What doctor printed in each case, written to $TMPDIR/qmd-doctor-samples.md for people to read. */
const samples: string[] = [];
const doctor = async (args: string[] = [], env = envIn(runtimeA)) => {
  const run = await runQmd(['doctor', ...args], env);
  if (!args.includes('--json')) samples.push(`$ qmd doctor ${args.join(' ')}   # exit ${run.code}\n${run.stdout}`);
  return run;
};
const serverPid = (runtime: string): number =>
  (JSON.parse(readFileSync(sharedPaths(ws.index, envIn(runtime)).record, 'utf8')) as { pid: number }).pid;

beforeAll(async () => {
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], envIn(runtimeA));
  expect(added.code, added.stderr).toBe(0);
});
afterAll(async () => {
  for (const relay of relays) relay.kill();
  for (const pid of sharedServerPids(ws.index)) {
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  }
  await eventually(() => sharedServerPids(ws.index).length === 0, 'no server left');
  writeFileSync(join(tmpdir(), 'qmd-doctor-samples.md'), `${samples.join('\n\n')}\n`);
  ws.cleanup();
  rmSync(runtimeA, { recursive: true, force: true });
  rmSync(runtimeB, { recursive: true, force: true });
});

describe('qmd doctor', () => {
  let a: Connected;

  it('a healthy index, served by a shared server and a relay: every check, both processes with their roles and the client, exit 0', async () => {
    a = await connect(envIn(runtimeA));
    const server = serverPid(runtimeA);
    const run = await doctor();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^QMD Doctor\n\nIndex: /);
    expect(out).toContain(`Index: ${ws.index}`);
    expect(out).toMatch(/^✓ Node: v2\d\./m);
    expect(out).toMatch(/^✓ SQLite: 3\.\d+\.\d+ \(better-sqlite3 13\.2\.0\)$/m);
    expect(out).toMatch(/^✓ sqlite-vec: v0\.1\.9$/m);
    expect(out).toMatch(/^✓ index: [\d.]+ MB, 2 documents; quick_check: ok$/m);
    expect(out).toContain(`✓ collections: 1 collection\n  - notes: 2 documents, ${ws.notesDir}\n`);
    expect(out).toContain('⚠ embedding freshness: 2 notes not yet embedded');
    expect(out).toContain('Next: qmd embed');
    expect(out).toContain(`  - QMD_INDEX=${ws.index}: the index every command uses`);
    // The embedding model is not downloaded (a warning: searches work by words); the others are off.
    expect(out).toMatch(/^⚠ models: 1 of 3 not downloaded .*Next: qmd pull$/m);
    expect(out).toContain('  - reranking: off\n  - query expansion: off');
    expect(out).toMatch(/^✓ device: --gpu auto \(the default\); llama\.cpp not loaded/m);
    // What only we can say: who runs, in which role, for which client.
    expect(out).toMatch(
      new RegExp(
        `^  pid ${a.relay.child.pid}, relay, up \\d+ s, index ${ws.index}, client doctor-test 1\\.2\\.3, qmd `,
        'm',
      ),
    );
    expect(out).toMatch(
      new RegExp(`^  pid ${server}, shared server, up \\d+ s, index ${ws.index}, 1 client, qmd `, 'm'),
    );
    expect(out).toContain(
      `Places looked in\n  ${placeA} (this qmd’s place)\n  ${placeB} (an older qmd’s place; absent)`,
    );
    expect(out).toContain('✓ nothing that should not be');
    expect(out.trimEnd().split('\n').at(-1)).toBe('No problems found.');

    const json = await doctor(['--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.processes.map((p: { role: string; pid: number }) => [p.role, p.pid]).sort()).toEqual(
      [
        ['relay', a.relay.child.pid],
        ['shared', server],
      ].sort(),
    );
    expect(report.checks.find((c: { name: string }) => c.name === 'sqlite-vec')).toMatchObject({ mark: 'ok' });
  });

  it('two shared servers for one index (two clients started with different places): both named, the fix, exit 1; one that stops answering is named within the bound', async () => {
    const b = await connect(envIn(runtimeB));
    const [first, second] = [serverPid(runtimeA), serverPid(runtimeB)].sort((x, y) => x - y);
    expect(first).not.toBe(second);
    const run = await doctor();
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain(
      `✗ two shared servers for one index: pids ${first} and ${second} both serve ${ws.index}. ` +
        `Next: qmd --index ${ws.index} mcp stop --shared`,
    );
    expect(run.stdout).toContain(`  - two shared servers for one index: qmd --index ${ws.index} mcp stop --shared`);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('1 problem found.');

    // B's server stopped (SIGSTOP), its relay gone so that nothing replaces it: doctor asks, waits its bound, names it.
    b.relay.kill();
    await b.relay.closed;
    const stopped = serverPid(runtimeB);
    process.kill(stopped, 'SIGSTOP');
    try {
      const silent = await doctor();
      expect(silent.code).toBe(1);
      expect(silent.stdout).toMatch(
        new RegExp(
          `^✗ server does not answer: ${placeB}/mcp-[0-9a-f]{16}-${stopped}\\.sock took no answer within 2000 ms \\(pid ${stopped} is stopped or hung\\)\\. Next: kill -CONT ${stopped} if it was stopped, else kill ${stopped}`,
          'm',
        ),
      );
      expect(silent.stdout).toMatch(new RegExp(`^  pid ${stopped}, .*DOES NOT ANSWER$`, 'm'));
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
    process.kill(stopped, 'SIGTERM');
    await eventually(() => !isAlive(stopped), 'server B gone');
  });

  it('a SIGKILLed shared server leaves its sockets and its record: named as stale with the rm that fixes it, exit 1; after the fix, exit 0', async () => {
    a.relay.kill();
    await a.relay.closed;
    const killed = serverPid(runtimeA);
    process.kill(killed, 'SIGKILL');
    await eventually(() => !isAlive(killed), 'server A gone');
    const paths = sharedPaths(ws.index, envIn(runtimeA));
    const own = join(placeA, `mcp-${paths.hash}-${killed}.sock`);
    const left = [own, paths.socket, paths.record];

    const run = await doctor();
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain(
      `✗ stale socket and pidfile: of ${ws.index}, left by pid ${killed}, which is gone. Next: rm ${left.join(' ')}\n` +
        `  - ${own}: nothing listens on it\n  - ${paths.socket}: nothing listens on it\n  - ${paths.record}: its pid is gone\n`,
    );
    expect(run.stdout).toContain('Processes of this user: none');

    // The fix, as printed, then doctor again.
    const fix = /Next: (rm [^\n]+)/.exec(run.stdout)?.[1] ?? '';
    for (const file of fix.split(' ').slice(1)) rmSync(file);
    const after = await doctor();
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).toContain('✓ nothing that should not be');
  });

  it('a relay that no shared server answers for is named as serving alone, with its client, and a place open to others as not private: exit 1', async () => {
    // A relay's record as it writes it (src/relay/process-record.ts); this test's process stands
    // in for the relay (alive, and no shared server of the index runs now).
    const procs = join(placeA, 'procs');
    mkdirSync(procs, { recursive: true, mode: 0o700 });
    const record = join(procs, `${process.pid}.json`);
    writeFileSync(
      record,
      JSON.stringify({
        pid: process.pid,
        role: 'relay',
        index: ws.index,
        ppid: process.ppid,
        client: { name: 'doctor-test', version: '1.2.3' },
        startedAt: new Date().toISOString(),
        version: '0.1.0',
      }),
      { mode: 0o600 },
    );
    // And the place opened to other users (its sockets could be anyone's server).
    chmodSync(placeA, 0o755);
    try {
      const run = await doctor();
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.stdout).toContain(
        `✗ place not private: ${placeA} is open to other users (mode 755) (qmd refuses to serve or connect there). Next: ls -ld ${placeA}; chmod 700 ${placeA} if it is yours`,
      );
      expect(run.stdout).toContain(
        `✗ relay serving alone: pid ${process.pid} (doctor-test) serves its client alone: no shared server answers for ${ws.index}. ` +
          `Next: it rejoins on its own once one answers; restarting its client (pid ${process.ppid}) starts one at once`,
      );
      expect(run.stdout).toMatch(
        new RegExp(`^  pid ${process.pid}, relay, up \\d+ s, index .*, client doctor-test 1\\.2\\.3`, 'm'),
      );
    } finally {
      chmodSync(placeA, 0o700);
      rmSync(record);
    }
  });

  it('a damaged index is named INDEX_CORRUPT, and a model file that is a web page is named with qmd pull --refresh: exit 1', async () => {
    const damaged = join(ws.dir, 'damaged.sqlite');
    copyFileSync(ws.index, damaged);
    const size = statSync(damaged).size;
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.alloc(size - 4096), 0, size - 4096, 4096);
    closeSync(fd);
    // What a captive portal leaves under the embedding model's name.
    const models = join(cache, 'qmd', 'models');
    mkdirSync(models, { recursive: true });
    const page = join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf');
    writeFileSync(page, '<!DOCTYPE html><html><body>Sign in to the network</body></html>\n');

    const run = await doctor(['--index', damaged]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `^✗ index: INDEX_CORRUPT: The index ${damaged.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is damaged \\(`,
        'm',
      ),
    );
    expect(run.stdout).toMatch(/^✗ models: embedding: a file that does not load\. Next: qmd pull --refresh/m);
    expect(run.stdout).toContain(
      `  - embedding: ${page} (0.0 MB) does not load: it is a web page (HTML), not a GGUF model`,
    );
    // The checks that do not need the index still run.
    expect(run.stdout).toMatch(/^✓ sqlite-vec: /m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('2 problems found.');
    const json = JSON.parse((await doctor(['--index', damaged, '--json'])).stdout);
    expect(json.ok).toBe(false);
    expect(json.checks.find((c: { name: string }) => c.name === 'index')).toMatchObject({
      mark: 'fail',
      code: 'INDEX_CORRUPT',
    });
  });
});
