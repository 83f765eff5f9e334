/**
 * Tests generated from the session's machine (one client of `qmd mcp --shared`), run by
 * ./driver.ts: every shortest path, every transition no shortest path takes, every simple path,
 * and probes of what the machine ignores, replayed against the real shared host with one
 * session open, the server's own steps succeeding at once and its bounds beyond every path
 * (./shared-model.ts). `server.closing` is the server's `shutdown()`, `server.escalated` a
 * signal during its teardown, as in production. The contract oracle checks after every input;
 * the host's child actor is compared with the machine after every step; coverage of the session
 * machine's states and transitions is computed from its definition.
 *
 * Bounds: at most 2 handlers in flight; for the shortest paths handlers may start in any state
 * before done, for the simple paths only while serving.
 */
import { sessionMachine } from '../../machines/session.js';
import { describeGeneratedTests } from './driver.js';
import { actorRecorder, sessionTraversal } from './shared-model.js';
import { probeSession, sessionIgnored } from './shared-probes.js';
import { replaySession } from './shared-replay.js';

const MAX_INFLIGHT = 2;

describeGeneratedTests({
  label: 'session model',
  title: 'paths generated from the session’s machine',
  machine: sessionMachine,
  full: sessionTraversal({ maxInflight: MAX_INFLIGHT, startsDuringTeardown: true }),
  simple: sessionTraversal({ maxInflight: MAX_INFLIGHT, startsDuringTeardown: false }),
  replay: replaySession,
  ignoredAt: (path) => sessionIgnored(sessionMachine, path, MAX_INFLIGHT),
  probe: probeSession,
  recorder: actorRecorder,
  transient: ['session.failedStep'],
});
