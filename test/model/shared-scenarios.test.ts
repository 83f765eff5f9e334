/**
 * The shared server's deterministic scenarios (./shared-scenarios.ts): bounds at their edges,
 * the idle bound against time, exit codes without a trigger and during teardown, and each
 * trigger or ending followed by each other one, each judged by the shared contract oracle.
 */
import { describe, it } from 'vitest';
import { expectNone } from './driver.js';
import {
  idleScenarios,
  runAllShared,
  serverTriggerScenarios,
  sessionTriggerScenarios,
  sharedBoundConfigs,
  sharedBoundScenarios,
} from './shared-scenarios.js';

describe('deterministic scenarios of the shared server', () => {
  it.each(sharedBoundConfigs().map((c) => [JSON.stringify(c)] as const))(
    'bounds %s, with time passing over each',
    async (key) => {
      const list = sharedBoundScenarios().filter((s) => JSON.stringify(s.config) === key);
      expectNone(await runAllShared(list), list.length);
    },
  );

  it('the idle bound while sessions are open, after the last leaves, after a new one arrives', async () => {
    const list = idleScenarios();
    expectNone(await runAllShared(list), list.length);
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP', 'shutdown', 'idle'])(
    'a teardown begun by %s, followed by each other trigger and by exit codes, in each state',
    async (first) => {
      const list = serverTriggerScenarios().filter((s) => s.first === first);
      expectNone(await runAllShared(list), list.length);
    },
  );

  it('each ending of a session followed by each other one and by a hurry, in each state', async () => {
    const list = sessionTriggerScenarios();
    expectNone(await runAllShared(list), list.length);
  });
});
