/**
 * Who holds a record (`holderAlive`), with process identity unavailable as on macOS: a record
 * whose socket does not answer is judged by its age and its PID until the server says it
 * listens; from then on a silent socket means the holder is gone, even while its PID is still
 * there (a SIGKILLed server not yet reaped when the next one looks).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimPidfile,
  holderAlive,
  markListening,
  type PidRecord,
  readPidfile,
} from '../../src/serve/daemon/pidfile.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qmd-pidfile-'));
  process.env.QMD_TEST_NO_PROC = '1';
});
afterEach(() => {
  delete process.env.QMD_TEST_NO_PROC;
  rmSync(dir, { recursive: true, force: true });
});

function record(overrides: Partial<PidRecord> = {}): PidRecord {
  return {
    pid: process.pid,
    instance: 'run-1',
    host: '',
    port: 0,
    url: 'unix:x',
    index: '/i.sqlite',
    version: '0',
    startedAt: new Date().toISOString(),
    control: join(dir, 'nothing-listens.sock'),
    ...overrides,
  };
}

describe('holderAlive without /proc', () => {
  it('a fresh record of a live PID is a server still starting', async () => {
    expect(await holderAlive(record(), join(dir, 'nothing-listens.sock'))).toBe(true);
  });

  it('once it said it listens, a silent socket is a gone holder, though its PID lives', async () => {
    expect(await holderAlive(record({ listening: true }), join(dir, 'nothing-listens.sock'))).toBe(false);
  });

  it('markListening marks only this run’s record, and a new claim then takes it over', async () => {
    const path = join(dir, 'mcp.json');
    const mine = record();
    expect(await claimPidfile(path, mine)).toEqual({ claimed: true });
    markListening(path, { ...mine, instance: 'another-run' });
    expect((readPidfile(path) as PidRecord).listening).toBeUndefined();
    markListening(path, mine);
    expect((readPidfile(path) as PidRecord).listening).toBe(true);
    // This process's PID is alive and the record is seconds old: only `listening` lets it go.
    expect(await claimPidfile(path, record({ instance: 'run-2' }))).toEqual({ claimed: true });
    expect((readPidfile(path) as PidRecord).instance).toBe('run-2');
  });
});
