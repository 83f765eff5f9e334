/**
 * `notifications/resources/list_changed` from the watcher's batches (src/serve/list-changed.ts)
 * on a fake clock: which batches are news, the throttle, who is told, and that nothing is due
 * after close. A real client receiving it: test/mcp/list-changed.test.ts.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createListChangedNotifier } from '../../src/serve/list-changed.js';
import { FakeClock, flush } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

/** A server as the notifier sees it: connected or not, counting what it sent. */
function fakeServer(connected = true, fails = false) {
  const sent: number[] = [];
  const server = {
    isConnected: () => connected,
    server: {
      sendResourceListChanged: async () => {
        sent.push(1);
        if (fails) throw new Error('write EPIPE');
      },
    },
  };
  return { server: server as unknown as McpServer, sent };
}

const ADDED = { collection: 'notes', added: ['a.md'], updated: [], removed: [] };
const REMOVED = { collection: 'notes', added: [], updated: [], removed: ['b.md'] };
const UPDATED = { collection: 'notes', added: [], updated: ['c.md'], removed: [] };

function setup() {
  const clock = new FakeClock();
  const notifier = createListChangedNotifier({ clock, log: recordingLog() });
  return { clock, notifier };
}

describe('list_changed from committed batches', () => {
  it('a note added or removed is told at once; an edit changes no list', () => {
    const { notifier } = setup();
    const a = fakeServer();
    notifier.track(a.server);
    notifier.indexed(UPDATED);
    expect(a.sent).toEqual([]);
    notifier.indexed(ADDED);
    expect(a.sent).toEqual([1]);
  });

  it('a burst within a second is one more notification, at the second’s end', async () => {
    const { clock, notifier } = setup();
    const a = fakeServer();
    notifier.track(a.server);
    notifier.indexed(ADDED);
    await clock.advance(100);
    for (let i = 0; i < 50; i++) notifier.indexed(i % 2 ? ADDED : REMOVED);
    expect(a.sent.length).toBe(1);
    expect(clock.pending('unref')).toBe(1);
    expect(clock.pending('ref')).toBe(0);
    await clock.advance(899);
    expect(a.sent.length).toBe(1);
    await clock.advance(1);
    expect(a.sent.length).toBe(2);
    // Quiet for a second: the next change goes at once again.
    await clock.advance(1000);
    notifier.indexed(REMOVED);
    expect(a.sent.length).toBe(3);
  });

  it('every connected server is told; one not connected is not, and one that fails costs nothing', async () => {
    const { notifier } = setup();
    const a = fakeServer();
    const b = fakeServer(false);
    const c = fakeServer(true, true);
    for (const s of [a, b, c]) notifier.track(s.server);
    notifier.indexed(ADDED);
    await flush();
    expect([a.sent.length, b.sent.length, c.sent.length]).toEqual([1, 0, 1]);
  });

  it('after close nothing is sent, and the trailing one owed is dropped with its timer', async () => {
    const { clock, notifier } = setup();
    const a = fakeServer();
    notifier.track(a.server);
    notifier.indexed(ADDED);
    notifier.indexed(ADDED);
    notifier.close();
    expect(clock.pending()).toBe(0);
    await clock.advance(5000);
    notifier.indexed(ADDED);
    expect(a.sent).toEqual([1]);
  });
});
