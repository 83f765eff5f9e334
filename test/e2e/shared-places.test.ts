/**
 * One place per person (docs/design.md §7), with the SDK's real stdio client starting each
 * relay as MCP hosts do: clients started with the SDK's default environment (only HOME,
 * LOGNAME, PATH, SHELL, TERM and USER), with a desktop terminal's XDG_RUNTIME_DIR, and with
 * another TMPDIR all reach one shared server for one index; `qmd status` and `qmd mcp stop`
 * run from each of those environments see it. After an upgrade, a server an older qmd left at
 * its old place (played by one build through `QMD_TEST_LEGACY_PLACE` and `QMD_TEST_VERSION`,
 * read only by tests) is found, handed off, listed as retiring, and ended by `stop --all`.
 * Every qmd process says what it is in its record (`src/relay/process-record.ts`).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hostFacts, sharedPaths } from '../../src/relay/paths.js';
import { readProcessRecords } from '../../src/relay/process-record.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace, textOf } from '../support/qmd.js';
import { cleanPlace, eventually, isAlive, sharedServerPids } from './fixtures/shared.js';

const NOTES = { 'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n' };
const ws = tempWorkspace(NOTES);
const home = join(ws.dir, 'home');
const runtime = mkdtempSync(join(tmpdir(), 'qmd-xdg-'));
const otherTmp = mkdtempSync(join(tmpdir(), 'qmd-tmpdir-'));
mkdirSync(home, { recursive: true });

/** What a client passes: the SDK's default environment (this test's HOME), plus what a config's `env` adds. */
const sdkDefault = (): Record<string, string> => ({ ...getDefaultEnvironment(), HOME: home });
const ENVS: Array<[string, Record<string, string>]> = [
  ["the SDK's default", sdkDefault()],
  ['a desktop session’s XDG_RUNTIME_DIR', { ...sdkDefault(), XDG_RUNTIME_DIR: runtime }],
  ['another TMPDIR', { ...sdkDefault(), TMPDIR: otherTmp }],
];
/** The index and the models are named on the command line, as `qmd mcp config` writes it. */
const ARGS = ['--index', ws.index, '--rerank-model', 'off', '--expand-model', 'off'];

interface Session {
  client: Client;
  relay: ChildProcess;
  stderr: () => string;
}
const open: Session[] = [];

async function connect(env: Record<string, string>, name: string): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, ...ARGS, 'mcp', '--shared'],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name, version: '1.2.3' });
  await client.connect(transport);
  const relay = (transport as unknown as { _process: ChildProcess })._process;
  const session = { client, relay, stderr: () => stderr };
  open.push(session);
  return session;
}

const qmd = (args: string[], env: Record<string, string>) => runQmd([...ARGS, ...args], env);
const statusOf = async (env: Record<string, string>) => {
  const run = await qmd(['status', '--json'], env);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout).sharedServer as {
    running: boolean;
    pid: number;
    sessions: number;
    servers: Array<{ role: string; pid: number; oldPlace: boolean; version: string }>;
  };
};

beforeAll(async () => {
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], qmdEnv(ws.index));
  expect(added.code, added.stderr).toBe(0);
});
afterEach(async () => {
  for (const s of open.splice(0)) if (s.relay.exitCode === null) s.relay.kill('SIGKILL');
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  await eventually(() => sharedServerPids(ws.index).length === 0, 'no server left');
});
afterAll(() => {
  cleanPlace(ws.index);
  cleanPlace(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_TEST_LEGACY_PLACE: '1' });
  ws.cleanup();
  rmSync(runtime, { recursive: true, force: true });
  rmSync(otherTmp, { recursive: true, force: true });
});

describe('one place per person', () => {
  it('clients with stripped, XDG_RUNTIME_DIR and other-TMPDIR environments share one server; status and stop from each see it', async () => {
    const sessions: Session[] = [];
    for (const [what, env] of ENVS) {
      const s = await connect(env, `client ${sessions.length}`);
      const answer = await s.client.callTool({ name: 'status', arguments: {} });
      expect(textOf(answer), what).toContain('1 document');
      sessions.push(s);
    }
    const servers = sharedServerPids(ws.index);
    expect(servers).toHaveLength(1);
    for (const [what, env] of ENVS) {
      const seen = await statusOf(env);
      expect(seen, what).toMatchObject({ running: true, pid: servers[0], sessions: 3 });
      expect(seen.servers, what).toEqual([
        expect.objectContaining({ role: 'shared', pid: servers[0], oldPlace: false }),
      ]);
    }
    expect(sharedPaths(ws.index, hostFacts({})).socket).toBe(
      `/tmp/qmd-${process.getuid?.()}/${sharedPaths(ws.index).socket.split('/').at(-1)}`,
    );

    // Each qmd process of the user says what it is: three relays with their clients, one server.
    await eventually(() => {
      const mine = readProcessRecords(hostFacts()).filter((r) => r.index === ws.index);
      return (
        mine.filter((r) => r.role === 'relay' && r.client !== null).length === 3 &&
        mine.some((r) => r.role === 'shared')
      );
    }, 'the process records');
    const records = readProcessRecords(hostFacts()).filter((r) => r.index === ws.index);
    expect(
      records
        .filter((r) => r.role === 'relay')
        .map((r) => r.client?.name)
        .sort(),
    ).toEqual(['client 0', 'client 1', 'client 2']);
    expect(records.find((r) => r.role === 'shared')?.pid).toBe(servers[0]);

    // Stopped from the third environment: the relays carry on with a new server, which every environment sees.
    const stopped = await qmd(['mcp', 'stop', '--shared'], ENVS[2]![1]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(
      `Stopped the shared server (pid ${servers[0]}): it ran its teardown and exited; its 3 connected clients carried on: their relays start a new server at once (--all ends them too)`,
    );
    for (const s of sessions)
      expect(textOf(await s.client.callTool({ name: 'status', arguments: {} }))).toContain('1 document');
    const next = sharedServerPids(ws.index);
    expect(next).toHaveLength(1);
    for (const [what, env] of ENVS) expect(await statusOf(env), what).toMatchObject({ pid: next[0], sessions: 3 });
    // Stopped again from the SDK's default environment: it finds the new server, not another.
    const again = await qmd(['mcp', 'stop', '--shared'], ENVS[0]![1]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toMatch(
      new RegExp(`^Stopped the shared server \\(pid ${next[0]}\\): .*its 3 connected clients carried on`),
    );
    for (const s of sessions)
      expect(textOf(await s.client.callTool({ name: 'status', arguments: {} }))).toContain('1 document');
    expect(sharedServerPids(ws.index)).toHaveLength(1);
    // --all from the second: every relay ends with it, exit 0.
    const all = await qmd(['mcp', 'stop', '--shared', '--all'], ENVS[1]![1]);
    expect(all.code, all.stderr).toBe(0);
    for (const s of sessions) {
      if (s.relay.exitCode === null) await new Promise((resolve) => s.relay.once('exit', resolve));
      expect(s.relay.exitCode, s.stderr()).toBe(0);
    }
    await eventually(() => readProcessRecords(hostFacts()).every((r) => r.index !== ws.index), 'the records removed');
  });

  it('after an upgrade: a server an older qmd left at its old place is found, handed off, listed as retiring, and ended by stop --all', async () => {
    const desktop = ENVS[1]![1];
    const older = { ...desktop, QMD_TEST_LEGACY_PLACE: '1', QMD_TEST_VERSION: '0.0.1' };
    const a = await connect(older, 'old client');
    expect(textOf(await a.client.callTool({ name: 'status', arguments: {} }))).toContain('1 document');
    const [old] = sharedServerPids(ws.index);
    expect(sharedPaths(ws.index, older).socket.startsWith(`${runtime}/qmd/`)).toBe(true);
    // Before any newer relay: status from the desktop's environment finds it at its old place.
    const before = await statusOf(desktop);
    expect(before).toMatchObject({ running: true, pid: old });
    expect(before.servers).toEqual([
      expect.objectContaining({ role: 'shared', pid: old, oldPlace: true, version: '0.0.1' }),
    ]);
    const text = (await qmd(['status'], desktop)).stdout;
    expect(text).toMatch(
      new RegExp(`^Shared server: pid ${old} \\(qmd 0\\.0\\.1, at an older qmd's place ${runtime}/qmd/`, 'm'),
    );

    // A relay of this qmd, with the same environment: the old one is asked to hand over.
    const b = await connect(desktop, 'new client');
    expect(textOf(await b.client.callTool({ name: 'status', arguments: {} }))).toContain('1 document');
    expect(b.stderr()).toContain(
      `the shared server (pid ${old}) at an older qmd's place ${runtime}/qmd is qmd 0.0.1: starting one of qmd`,
    );
    const current = sharedServerPids(ws.index).find((pid) => pid !== old)!;
    const after = await statusOf(desktop);
    expect(after).toMatchObject({ running: true, pid: current, sessions: 1 });
    expect(after.servers.map((s) => [s.role, s.pid, s.oldPlace]).sort()).toEqual(
      [
        ['retiring', old, true],
        ['shared', current, false],
      ].sort(),
    );
    // The old client carries on with the old server until it is ended with its relay.
    expect(textOf(await a.client.callTool({ name: 'status', arguments: {} }))).toContain('1 document');
    const all = await qmd(['mcp', 'stop', '--shared', '--all'], desktop);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(
      `Stopped the retiring shared server at an older qmd's place ${runtime}/qmd (pid ${old}, qmd 0.0.1)`,
    );
    expect(all.stdout).toContain(`Stopped the shared server (pid ${current})`);
    await eventually(() => !isAlive(old!) && !isAlive(current), 'both servers gone');
    for (const s of [a, b]) {
      if (s.relay.exitCode === null) await new Promise((resolve) => s.relay.once('exit', resolve));
      expect(s.relay.exitCode, s.stderr()).toBe(0);
    }
  });
});
