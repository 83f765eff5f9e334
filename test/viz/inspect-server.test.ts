import { once } from 'node:events';
import { request } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createInspectObserver } from '../../src/viz/inspect-observer.js';
import { type InspectorServer, serveInspector } from '../../src/viz/inspect-server.js';
import { describeMessage, SessionNames } from '../../src/viz/inspect-summary.js';
import { createHarness } from '../support/host-harness.js';
import { recordingLog } from '../support/recording-log.js';

const servers: InspectorServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start() {
  const log = recordingLog();
  const { lines } = log;
  const server = await serveInspector({ port: 0, log });
  servers.push(server);
  return { server, lines };
}

/** A browser tab's end of the relay: everything the bridge page would post to Stately's inspector. */
async function viewer(server: InspectorServer, origin?: string) {
  const ws = new WebSocket(`${server.url}/viewer`, origin === undefined ? {} : { origin });
  const messages: Array<{ type: string; sessionId: string; rootId: string; snapshot?: { value?: unknown } }> = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await once(ws, 'open');
  return { ws, messages };
}

function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, host === undefined ? {} : { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function runLifecycleAgainst(url: string) {
  const log = recordingLog();
  const observer = createInspectObserver(url, log, { pid: 4242 });
  const run = createHarness({ log, inspect: [observer.observe] });
  run.stdin.end();
  await run.clock.advance(10);
  await run.lifecycle.done;
  await vi.waitFor(() => expect(observer.state()).toBe('closed'));
}

describe('serveInspector', () => {
  it('serves the bridge page that feeds Stately’s inspector from /viewer', async () => {
    const { server } = await start();
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(server.viewerUrl).toBe(`${server.url.replace('ws:', 'http:')}/`);
    const page = await get(server.viewerUrl);
    expect(page.status).toBe(200);
    expect(page.body).toContain('"https://stately.ai/inspect"');
    expect(page.body).toContain('@statelyai.connected');
    expect(page.body).toContain('"/viewer"');
  });

  it('prints each qmd process’s lifecycle and relays it to the browser', async () => {
    const { server, lines } = await start();
    const tab = await viewer(server);
    await runLifecycleAgainst(server.url);

    await vi.waitFor(() => expect(lines).toContain('[pid 4242] disconnected'));
    expect(lines).toEqual(
      expect.arrayContaining([
        '[pid 4242] connected',
        '[pid 4242] actor lifecycle started',
        '[pid 4242] event stdin.end',
        '[pid 4242] state closingTransport (inflight 0)',
        '[pid 4242] closeTransport done',
        '[pid 4242] state done (inflight 0): stdin closed: drained, all steps ok, exit 0',
      ]),
    );
    const states = lines.filter((l) => l.startsWith('[pid 4242] state ')).map((l) => l.split(' ')[3]);
    expect(states).toEqual(['connected', 'closingTransport', 'disposingStore', 'done']);
    await vi.waitFor(() => expect(tab.messages.at(-1)?.snapshot).toBeDefined());
    expect(tab.messages[0]?.type).toBe('@xstate.actor');
    tab.ws.close();
  });

  it('replays actor registrations and recent messages to a browser that comes late', async () => {
    const { server, lines } = await start();
    await runLifecycleAgainst(server.url);
    await vi.waitFor(() => expect(lines).toContain('[pid 4242] disconnected'));
    const tab = await viewer(server);
    await vi.waitFor(() => expect(tab.messages.length).toBeGreaterThan(5));
    expect(tab.messages[0]?.type).toBe('@xstate.actor');
    const roots = tab.messages.filter((m) => m.type === '@xstate.snapshot' && m.sessionId === m.rootId);
    expect(roots.at(-1)?.snapshot?.value).toBe('done');
    tab.ws.close();
  });

  it('refuses other hosts and other origins (DNS rebinding)', async () => {
    const { server } = await start();
    const port = new URL(server.viewerUrl).port;
    expect((await get(server.viewerUrl, `evil.example:${port}`)).status).toBe(403);
    expect((await get(server.viewerUrl, `localhost:${port}`)).status).toBe(200);
    const foreign = new WebSocket(`${server.url}/viewer`, { origin: 'https://evil.example' });
    const [error] = await once(foreign, 'error');
    expect(String(error)).toMatch(/403/);
    const same = await viewer(server, server.viewerUrl.replace(/\/$/, ''));
    same.ws.close();
  });

  it('closes with clients still connected', async () => {
    const { server } = await start();
    const tab = await viewer(server);
    const closed = once(tab.ws, 'close');
    await server.close();
    servers.splice(0);
    await closed;
  });
});

describe('the inspector terminal’s lines', () => {
  it('a state line counts the watcher’s index writes beside the handlers, when one is in flight', () => {
    const names = new SessionNames();
    const line = (context: object) =>
      describeMessage(
        {
          type: '@xstate.snapshot',
          sessionId: 'x',
          rootId: 'x',
          snapshot: { status: 'active', value: 'draining', context },
        },
        names,
      );
    expect(line({ inflight: 1, writes: 1 })).toBe('state draining (inflight 1, writes 1)');
    expect(line({ inflight: 0, writes: 0 })).toBe('state draining (inflight 0)');
  });
});
