/**
 * A relay that heals (docs/design.md §2.2), in process with a fake clock: serving alone, it
 * tries to rejoin with a growing wait and moves back when a shared server answers, the local
 * server's unanswered requests going with it and its late replies dropped; a shared server
 * silent while replies are owed, that does not answer its control socket either, is left for
 * another; only the one reply owed for an id sent reaches the client; the client is read to its
 * end, requests past the waiting bound refused at once.
 */
import { Duplex, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { rejoiner, silenceWatch } from '../../src/relay/heal.js';
import { createRelay, type OpenHint, type Upstream } from '../../src/relay/relay.js';
import { deferred } from '../support/deferred.js';
import { FakeClock, flush } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

function fakeServer(kind: 'shared' | 'local' = 'shared', pid = 7) {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const received: string[] = [];
  let partial = '';
  toServer.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    received.push(...parts);
  });
  const stream = Duplex.from({ writable: toServer, readable: fromServer });
  let released = 0;
  const upstream: Upstream = {
    stream,
    kind,
    pid,
    release: async () => {
      released++;
      stream.destroy();
    },
  };
  return {
    upstream,
    received,
    methods: () => received.map((l) => JSON.parse(l) as { id?: unknown; method?: string }),
    answer: (message: object) => fromServer.write(`${JSON.stringify(message)}\n`),
    released: () => released,
  };
}

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18' } };
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const call = (id: number, name = 'query') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } });
const result = (id: unknown) => ({ jsonrpc: '2.0', id, result: { content: [] } });

function setup(options: {
  opens: Array<Upstream | null>;
  rejoins?: Array<Upstream | null>;
  probe?: (u: Upstream) => Promise<boolean>;
  maxWaiting?: number;
}) {
  const clock = new FakeClock();
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: string[] = [];
  let partial = '';
  stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  const gate = createInflightGate();
  const log = recordingLog();
  const hints: OpenHint[] = [];
  const rejoinTimes: number[] = [];
  let opened = 0;
  let rejoined = 0;
  const relay = createRelay({
    stdin,
    stdout,
    gate,
    log,
    timers: clock,
    rejoinMs: 1000,
    silenceMs: 2000,
    ...(options.maxWaiting !== undefined && { maxWaiting: options.maxWaiting }),
    open: async (_signal, hint) => {
      hints.push(hint ?? {});
      const next = options.opens[opened++];
      if (next === undefined) return deferred<Upstream | null>().promise;
      return next;
    },
    rejoin: async () => {
      rejoinTimes.push(clock.now());
      return options.rejoins?.[rejoined++] ?? null;
    },
    ...(options.probe !== undefined && { probe: options.probe }),
  });
  relay.start();
  const send = (...messages: object[]) => stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
  const parsed = () => lines.map((l) => JSON.parse(l) as { id: unknown; error?: { message: string } });
  return { relay, gate, log, clock, stdin, send, parsed, hints, rejoinTimes };
}

describe('a relay serving alone', () => {
  it('tries to rejoin after 1, 2, 4 s …; when a shared server answers it moves there, and what the local server owes goes with it', async () => {
    const local = fakeServer('local');
    const shared = fakeServer('shared', 99);
    const r = setup({ opens: [local.upstream], rejoins: [null, null, shared.upstream] });
    r.send(initialize, initialized);
    await flush();
    local.answer(result(0));
    r.send(call(1));
    await flush();
    expect(local.methods().map((m) => m.id ?? m.method)).toEqual([0, 'notifications/initialized', 1]);
    await r.clock.advance(1000);
    await r.clock.advance(2000);
    expect(r.rejoinTimes).toEqual([1000, 3000]);
    // The third try (4 s after the second) finds the shared server.
    await r.clock.advance(4000);
    expect(r.rejoinTimes).toEqual([1000, 3000, 7000]);
    // It is opened as the client did (that reply swallowed), then sent the request the local one owes.
    const sent = shared.methods();
    expect(sent.map((m) => m.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    expect(sent[2]!.id).toBe(1);
    expect(local.released()).toBe(1);
    expect(r.log.lines).toContain('rejoined the shared server (pid 99); 1 request(s) sent to it again');
    // The local server's late reply is for nobody; the shared server's is the client's one reply.
    local.answer({ ...result(1), result: { from: 'local' } });
    shared.answer({ jsonrpc: '2.0', id: sent[0]!.id, result: {} });
    shared.answer({ ...result(1), result: { from: 'shared' } });
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([0, 1]);
    expect((r.parsed()[1] as unknown as { result: { from: string } }).result.from).toBe('shared');
    expect(r.gate.size).toBe(0);
    // Joined: no more tries.
    await r.clock.advance(120_000);
    expect(r.rejoinTimes).toHaveLength(3);
    await r.relay.release();
  });

  it('never moves while a request that is not safe to send twice is in flight; it moves once that one is answered', async () => {
    const local = fakeServer('local');
    const shared = fakeServer('shared');
    const r = setup({ opens: [local.upstream], rejoins: [shared.upstream] });
    r.send(initialize, initialized, call(1, 'some_other_tool'));
    await flush();
    local.answer(result(0));
    await r.clock.advance(1000);
    await r.clock.advance(1000);
    expect(r.rejoinTimes).toEqual([]);
    local.answer(result(1));
    await flush();
    await r.clock.advance(1000);
    expect(r.rejoinTimes).toEqual([3000]);
    expect(shared.methods().map((m) => m.method)).toEqual(['initialize', 'notifications/initialized']);
    await r.relay.release();
  });
});

describe('a shared server that stops answering', () => {
  it('silent while a reply is owed, and silent on its control socket: its requests move to another server', async () => {
    const stopped = fakeServer('shared', 41);
    const next = fakeServer('shared', 42);
    const probed: number[] = [];
    const r = setup({
      opens: [stopped.upstream, next.upstream],
      probe: async (u) => {
        probed.push(u.pid ?? -1);
        return false;
      },
    });
    r.send(initialize, initialized);
    await flush();
    stopped.answer(result(0));
    // Idle, nothing owed: no probe however long the silence.
    await r.clock.advance(10_000);
    expect(probed).toEqual([]);
    r.send(call(1));
    await flush();
    await r.clock.advance(1999);
    expect(probed).toEqual([]);
    await r.clock.advance(1000);
    expect(probed).toEqual([41]);
    await flush();
    expect(r.hints.at(-1)).toEqual({ hung: stopped.upstream });
    expect(r.log.warnings).toContainEqual(
      "the shared server (pid 41) has said nothing for 2000 ms and does not answer: moving this client's 1 request(s) to another server",
    );
    expect(next.methods().map((m) => m.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    next.answer({ jsonrpc: '2.0', id: next.methods()[0]!.id, result: {} });
    next.answer(result(1));
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([0, 1]);
    await r.relay.release();
  });

  it('a server that is only slow answers its control socket: the relay keeps waiting, and asks again after another silence', async () => {
    const slow = fakeServer('shared');
    let probes = 0;
    const r = setup({
      opens: [slow.upstream],
      probe: async () => {
        probes++;
        return true;
      },
    });
    r.send(initialize);
    await r.clock.advance(3000);
    expect(probes).toBe(1);
    await r.clock.advance(2000);
    expect(probes).toBe(2);
    slow.answer(result(0));
    await flush();
    await r.clock.advance(10_000);
    expect(probes).toBe(2);
    expect(r.parsed().map((m) => m.id)).toEqual([0]);
    await r.relay.release();
  });
});

describe('only the reply owed reaches the client', () => {
  it('a reply to an id never sent, and a second reply, are dropped and logged; one to a cancelled request quietly', async () => {
    const server = fakeServer();
    const r = setup({ opens: [server.upstream] });
    r.send(initialize, call(1), call(2));
    await flush();
    r.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    await flush();
    server.answer(result(0));
    server.answer(result(77));
    server.answer(result(1));
    server.answer({ ...result(1), result: { forged: true } });
    server.answer(result(2));
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([0, 1]);
    expect(r.log.warnings).toEqual([
      'dropped a reply to id 77, which this client never sent from the shared server',
      'dropped a second reply to id 1 from the shared server',
    ]);
    await r.relay.release();
  });
});

describe('the client is read to its end', () => {
  it('with no server yet: requests past the waiting bound are refused at once, the EOF is seen, and those still waiting are answered at the release', async () => {
    const r = setup({ opens: [], maxWaiting: 3 });
    let ended = false;
    r.stdin.on('end', () => {
      ended = true;
    });
    r.send(initialize, call(1), call(2), call(3), call(4));
    r.stdin.end();
    await flush();
    expect(ended).toBe(true);
    expect(r.parsed().map((m) => m.id)).toEqual([3, 4]);
    expect(r.parsed()[0]!.error?.message).toMatch(/requests are already waiting; this one was not run/);
    await r.relay.close();
    await r.relay.release();
    expect(r.parsed().map((m) => m.id)).toEqual([3, 4, 0, 1, 2]);
    expect(r.parsed()[2]!.error?.message).toBe('qmd: the server is shutting down; this request was not run');
    expect(r.gate.size).toBe(0);
  });
});

describe('the clocks', () => {
  it('rejoiner: waits double after each try that found nothing, up to the maximum; a try that says later keeps the wait', async () => {
    const clock = new FakeClock();
    const tries: number[] = [];
    const outcomes: Array<'none' | 'later' | 'joined'> = ['none', 'none', 'later', 'none', 'none', 'none', 'joined'];
    const r = rejoiner({
      firstMs: 100,
      maxMs: 500,
      timers: clock,
      attempt: async () => {
        tries.push(clock.now());
        return outcomes.shift() ?? 'joined';
      },
    });
    r.start();
    await clock.advance(10_000);
    expect(tries).toEqual([100, 300, 700, 1100, 1600, 2100, 2600]);
    expect(clock.pending()).toBe(0);
  });

  it('silence watch: asks once at a time, and says hung once', async () => {
    const clock = new FakeClock();
    const answer = deferred<boolean>();
    let probes = 0;
    let hung = 0;
    silenceWatch({
      silenceMs: 100,
      timers: clock,
      waiting: () => true,
      probe: () => {
        probes++;
        return answer.promise;
      },
      onHung: () => hung++,
    });
    await clock.advance(500);
    expect(probes).toBe(1);
    answer.resolve(false);
    await clock.advance(500);
    expect(hung).toBe(1);
    expect(probes).toBe(1);
  });
});
