/**
 * The shared server's deterministic scenarios (./shared-scenarios.ts): bounds at their edges,
 * the idle bound against time, exit codes without a trigger and during teardown, and each
 * trigger or ending followed by each other one, each judged by the shared contract oracle.
 */
import { describe, expect, it } from 'vitest';
import {
  idleScenarios,
  runAllShared,
  serverTriggerScenarios,
  sessionTriggerScenarios,
  sharedBoundScenarios,
} from './shared-scenarios.js';

describe('deterministic scenarios of the shared server', () => {
  it('every bound at 0, 1 and its default, with time passing over it', async () => {
    expect(await runAllShared(sharedBoundScenarios())).toEqual([]);
  });

  it('the idle bound while sessions are open, after the last leaves, after a new one arrives', async () => {
    expect(await runAllShared(idleScenarios())).toEqual([]);
  });

  it('each trigger of the server followed by each other one, and the exit code, in each state', async () => {
    expect(await runAllShared(serverTriggerScenarios())).toEqual([]);
  });

  it('each ending of a session followed by each other one and by a hurry, in each state', async () => {
    expect(await runAllShared(sessionTriggerScenarios())).toEqual([]);
  });
});
