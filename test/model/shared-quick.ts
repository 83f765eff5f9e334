/**
 * The cheap cut of the shared server's generated tests, for proving in `npm test` that they
 * kill a mutant (test/mutants/), as ./quick.ts does for the lifecycle: the shortest paths of
 * both machines (one payload variant), each replayed and probed with what the machine ignores,
 * then run to the end, all judged by the contract oracle alone.
 * Imported from a mutated copy of the repository, it tests that copy's machines.
 */
import { getShortestPaths } from 'xstate/graph';
import { sessionMachine } from '../../machines/session.js';
import { sharedServerMachine } from '../../machines/shared-server.js';
import {
  SERVER_INPUT,
  SESSION_INPUT,
  serializeServer,
  serializeSession,
  serverEvents,
  sessionEvents,
} from './shared-model.js';
import { probeServer, probeSession, serverIgnored, sessionIgnored } from './shared-probes.js';

/**
 * Probes the cut until a failure names `guarantee` (the one a mutant is meant to break);
 * returns that message, or, if none does, every distinct failure seen (empty: all passed).
 */
export async function brokenGuarantee(guarantee: string): Promise<string> {
  const others = new Set<string>();
  const attempt = async (run: () => Promise<void>): Promise<string | undefined> => {
    try {
      await run();
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes(`guarantee "${guarantee}" broken: `)) return message;
      others.add(message.split(' broken: ')[0]!);
    }
    return undefined;
  };
  const sessions = getShortestPaths(sessionMachine, {
    input: SESSION_INPUT,
    serializeState: serializeSession,
    events: sessionEvents({ maxInflight: 1, startsDuringTeardown: true }),
  });
  for (const path of sessions) {
    const found = await attempt(() => probeSession(path, sessionIgnored(sessionMachine, path, 1)));
    if (found) return found;
  }
  const servers = getShortestPaths(sharedServerMachine, {
    input: SERVER_INPUT,
    serializeState: serializeServer,
    events: serverEvents({ maxSessions: 2, exitCodeVariants: false }),
  });
  for (const path of servers) {
    const found = await attempt(() => probeServer(path, serverIgnored(sharedServerMachine, path, 2)));
    if (found) return found;
  }
  return [...others].join('; ');
}
