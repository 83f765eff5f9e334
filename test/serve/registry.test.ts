/**
 * Where `qmd status`, `qmd mcp stop` and a later `qmd doctor` find a user's servers
 * (`src/serve/control/registry.ts`): real Unix sockets answering the control protocol, real
 * records, in a place of the test's own (`QMD_TEST_LEGACY_PLACE` makes the old rule's
 * `$XDG_RUNTIME_DIR/qmd` this process's place, so nothing here touches `/tmp/qmd-<uid>`).
 */
import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../src/platform.js';
import { hostFacts, ownSocketPath, retiringRecordPath, type SharedPaths, sharedPaths } from '../../src/relay/paths.js';
import { processRecordsDir, readProcessRecords } from '../../src/relay/process-record.js';
import { listenControl } from '../../src/serve/control/listen.js';
import type { ServerStatus } from '../../src/serve/control/protocol.js';
import { everyServer, placesLookedIn, serversOfIndex } from '../../src/serve/control/registry.js';

const INDEX = '/notes/index.sqlite';
const closers: Array<() => void> = [];
const dirs: string[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function place(): { facts: HostFacts; paths: SharedPaths } {
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-registry-'));
  dirs.push(runtime);
  const facts = hostFacts({ XDG_RUNTIME_DIR: runtime, QMD_TEST_LEGACY_PLACE: '1' });
  const paths = sharedPaths(INDEX, facts);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  return { facts, paths };
}

const status = (pid: number, extra: Partial<ServerStatus> = {}): ServerStatus => ({
  kind: 'shared',
  pid,
  index: INDEX,
  version: '0.1.0',
  startedAt: '2026-01-01T00:00:00.000Z',
  uptimeMs: 1000,
  state: 'connected.serving',
  sessions: { live: 2, opened: 2, ended: 0 },
  ...extra,
});

async function answerOn(path: string, answer: ServerStatus): Promise<void> {
  closers.push(await listenControl(path, { index: INDEX, status: () => answer, stop: () => {} }));
}

describe('the servers of an index', () => {
  it('the one on the index’s socket, a retiring one on its own socket, one known only by its record; a record of a dead pid is dropped', async () => {
    const { facts, paths } = place();
    // The server that holds the place: its own socket, and the index's link to it.
    await answerOn(ownSocketPath(paths, 1001, facts), status(1001));
    linkSync(ownSocketPath(paths, 1001, facts), paths.socket);
    // A retiring server: its record names its pid; it answers on its own socket.
    await answerOn(ownSocketPath(paths, 1002, facts), status(1002, { retiring: 'replaced by qmd 0.2.0' }));
    writeFileSync(retiringRecordPath(paths, 1002, facts), JSON.stringify({ pid: 1002, version: '0.1.0' }));
    // An older qmd's, retired: no socket, its pid alive (the test runner's parent stands in).
    const alive = process.ppid;
    writeFileSync(
      retiringRecordPath(paths, alive, facts),
      JSON.stringify({ pid: alive, version: '0.0.9', retiring: 'replaced by qmd 0.1.0' }),
    );
    // A record whose server is gone.
    const dead = retiringRecordPath(paths, 2_147_483_646, facts);
    writeFileSync(dead, JSON.stringify({ pid: 2_147_483_646, version: '0.0.1' }));

    const found = await serversOfIndex(INDEX, facts);
    expect(found.servers.map((s) => [s.role, s.status.pid]).sort()).toEqual([
      ['retiring', 1002],
      ['shared', 1001],
    ]);
    expect(found.silent).toEqual([
      { role: 'retiring', place: paths.dir, pid: alive, version: '0.0.9', why: 'replaced by qmd 0.1.0' },
    ]);
    expect(found.looked[0]).toBe(paths.dir);
    expect(existsSync(dead)).toBe(false);
  });

  it('every server of the user, once each (a server answers on its own socket and on the index’s link); the places looked in', async () => {
    const { facts, paths } = place();
    await answerOn(ownSocketPath(paths, 1001, facts), status(1001));
    linkSync(ownSocketPath(paths, 1001, facts), paths.socket);
    const other = sharedPaths('/elsewhere/index.sqlite', facts);
    await answerOn(other.socket, status(1003, { index: '/elsewhere/index.sqlite' }));
    // The real place is looked in too (other servers of this user may answer there): only this test's.
    const every = (await everyServer(facts)).filter((s) => s.place === paths.dir);
    expect(every.map((s) => [s.status.pid, s.socket]).sort()).toEqual([
      [1001, paths.socket],
      [1003, other.socket],
    ]);
    expect(placesLookedIn(facts)[0]).toBe(paths.dir);
    expect(placesLookedIn(facts)).toContain(`/tmp/qmd-${process.getuid?.()}`);
  });
});

describe('the process records', () => {
  it('lists the live ones, oldest first, and drops a record whose pid is gone', () => {
    const { facts } = place();
    const dir = processRecordsDir(facts);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const record = (pid: number, role: string, startedAt: string) =>
      writeFileSync(
        join(dir, `${pid}.json`),
        JSON.stringify({ pid, role, index: INDEX, ppid: 1, client: null, startedAt, version: '0.1.0' }),
      );
    record(process.pid, 'relay', '2026-01-02T00:00:00.000Z');
    record(process.ppid, 'shared', '2026-01-01T00:00:00.000Z');
    record(2_147_483_646, 'plain', '2026-01-03T00:00:00.000Z');
    expect(readProcessRecords(facts).map((r) => [r.role, r.pid])).toEqual([
      ['shared', process.ppid],
      ['relay', process.pid],
    ]);
    expect(readProcessRecords(facts)).toHaveLength(2);
  });
});
