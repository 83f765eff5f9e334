import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { createInspectObserver, serialize } from '../../src/viz/inspect-observer.js';
import { createHarness } from '../support/host-harness.js';
import { recordingLog } from '../support/recording-log.js';

interface Message {
  type: string;
  sessionId: string;
  rootId: string;
  name?: string;
  definition?: string;
  event?: { type: string };
  snapshot?: { value?: unknown; status?: string };
}

/** TCP sockets that hold the event loop: an unref'd socket is not among them. */
function refdSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A real ws server; with `hold`, it answers the handshake only when the test calls `accept()`. */
async function receiver(options: { hold?: boolean } = {}) {
  let accept: () => void = () => {};
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    ...(options.hold && {
      verifyClient: (_info: unknown, done: (ok: boolean) => void) => {
        accept = () => done(true);
      },
    }),
  });
  await once(wss, 'listening');
  cleanup.push(() => {
    // ws 8 leaves open connections open on close(): end them so a failed test cannot hang here.
    for (const client of wss.clients) client.terminate();
    return new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  const messages: Message[] = [];
  const connected = new Promise<{ socket: WebSocket; closed: Promise<number> }>((resolve) => {
    wss.once('connection', (socket) => {
      socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Message));
      resolve({ socket, closed: once(socket, 'close').then(([code]) => code as number) });
    });
  });
  const { port } = wss.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, messages, connected, accept: () => accept() };
}

const rootSnapshots = (messages: Message[]) =>
  messages.filter((m) => m.type === '@xstate.snapshot' && m.sessionId === m.rootId).map((m) => m.snapshot?.value);
const rootEvents = (messages: Message[]) =>
  messages.filter((m) => m.type === '@xstate.event' && m.sessionId === m.rootId).map((m) => m.event?.type);

describe('createInspectObserver', () => {
  it('streams the lifecycle to the inspector in order, then closes its socket by itself', async () => {
    const stdoutWrites = vi.spyOn(process.stdout, 'write');
    const baseline = refdSockets();
    const inspector = await receiver();
    const log = recordingLog();
    const { warnings } = log;
    const observer = createInspectObserver(inspector.url, log);
    const run = createHarness({ log, closeTransport: { ms: 3 }, disposeStore: { ms: 4 }, inspect: [observer.observe] });

    const { closed } = await inspector.connected;
    // Two ends of one connection in this process: only the receiver's holds the loop.
    expect(refdSockets()).toBe(baseline + 1);

    run.stdin.end();
    await run.clock.advance(10);
    expect((await run.lifecycle.done).exitCode).toBe(0);
    await closed;

    const first = inspector.messages[0];
    expect(first?.type).toBe('@xstate.actor');
    expect(first?.name).toBe('lifecycle');
    // 0.7.2 serialises the definition with safe-stable-stringify: keys come sorted.
    expect(Object.keys(JSON.parse(first?.definition ?? '{}').states)).toEqual([
      'closingTransport',
      'connected',
      'disposingStore',
      'done',
      'draining',
      'failedStep',
    ]);
    expect(rootEvents(inspector.messages)).toEqual([
      'xstate.init',
      'stdin.end',
      'xstate.done.actor.closeTransport',
      'xstate.done.actor.disposeStore',
    ]);
    // Snapshots are per macrostep: `draining` is passed through within the step that leaves
    // `closingTransport` (it is idle at once), so the trace shows it and the inspector does not.
    expect(rootSnapshots(inspector.messages)).toEqual(['connected', 'closingTransport', 'disposingStore', 'done']);
    expect(observer.state()).toBe('closed');
    expect(warnings).toEqual([]);
    expect(stdoutWrites).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(refdSockets()).toBe(baseline));
  });

  it('with nothing listening: one warning, teardown unaffected, nothing left holding the loop', async () => {
    const probe = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const before = process.getActiveResourcesInfo().length;

    const log = recordingLog();
    const { warnings, firstWarning } = log;
    const observer = createInspectObserver(`ws://127.0.0.1:${port}`, log);
    const run = createHarness({ log, inspect: [observer.observe] });
    run.stdin.end();
    await run.clock.advance(10);
    expect((await run.lifecycle.done).summary).toBe('stdin closed: drained, all steps ok, exit 0');

    await firstWarning;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^cannot reach the Stately inspector at ws:\/\/127\.0\.0\.1:\d+ \(connect ECONNREFUSED/,
    );
    expect(observer.state()).toBe('failed');
    observer.stop();
    await vi.waitFor(() => expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(before));
  });

  it('with an inspector that accepts TCP but never answers: teardown ends, the socket holds nothing', async () => {
    const sockets: Socket[] = [];
    // It reads the handshake request (so it notices the client leaving) and never answers.
    const silent: Server = createServer((socket) => sockets.push(socket.resume()));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    cleanup.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { port } = silent.address() as { port: number };
    const baseline = refdSockets();

    const log = recordingLog();
    const { warnings } = log;
    const observer = createInspectObserver(`ws://127.0.0.1:${port}`, log);
    const run = createHarness({ log, inspect: [observer.observe] });
    await vi.waitFor(() => expect(sockets).toHaveLength(1));
    run.stdin.end();
    await run.clock.advance(10);
    await run.lifecycle.done;

    expect(observer.state()).toBe('connecting');
    expect(refdSockets()).toBe(baseline + 1); // the silent server's end only
    observer.stop();
    await once(sockets[0] as Socket, 'close');
    expect(observer.state()).toBe('closed');
    expect(warnings).toEqual([]);
  });

  it('keeps at most maxPending messages while connecting, and says how many it dropped', async () => {
    const inspector = await receiver({ hold: true });
    const log = recordingLog();
    const { warnings } = log;
    const observer = createInspectObserver(inspector.url, log, { maxPending: 5 });
    const run = createHarness({ log, inspect: [observer.observe] });
    // The whole teardown runs while the handshake is held: everything waits in the queue.
    run.stdin.end();
    await run.clock.advance(10);
    await run.lifecycle.done;
    // @statelyai/inspect 0.7.2 hands each event over on its own setTimeout(0); timers of equal
    // delay fire in the order they were set, so once this one fires every event is queued.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(observer.state()).toBe('connecting');
    inspector.accept();
    const { closed } = await inspector.connected;
    await closed;

    expect(inspector.messages).toHaveLength(5);
    expect(inspector.messages[0]?.type).toBe('@xstate.actor');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\d+ inspection event\(s\) dropped while connecting to ws:/);
  });

  it('turns an unusable URL into one warning', () => {
    const log = recordingLog();
    const { warnings } = log;
    const observer = createInspectObserver('not a url', log);
    observer.observe({ type: '@xstate.event' } as never);
    expect(observer.state()).toBe('failed');
    expect(warnings).toEqual([expect.stringMatching(/^the Stately inspector URL not a url is not usable/)]);
  });
});

describe('serialize', () => {
  it('keeps an error message, marks cycles, and repeats shared objects', () => {
    const shared = { a: 1 };
    const cyclic: Record<string, unknown> = { shared, again: shared };
    cyclic.self = cyclic;
    expect(JSON.parse(serialize({ error: new Error('boom'), cyclic, n: 10n }) ?? 'null')).toEqual({
      error: { name: 'Error', message: 'boom' },
      cyclic: { shared: { a: 1 }, again: { a: 1 }, self: '[Circular]' },
      n: '10',
    });
  });
});
