/**
 * When the host sends `handler.started` / `handler.settled` to the actor. Unobserved (how
 * `qmd mcp` runs unless a trace or an inspector is attached) the gate counts alone while
 * connected — no actor event per tool call — and the trigger carries its count; from the
 * trigger on, every handler event goes to the actor. Observed, every one goes from the start.
 * The generated paths check the counts; these check the events themselves.
 */
import { describe, expect, it, vi } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { createHarness } from '../support/host-harness.js';

const typesSent = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.map(([event]) => (event as { type: string }).type);

describe('handler events and the actor', () => {
  it('unobserved: none while connected; the trigger carries the count; every one after it', async () => {
    const h = createHarness({ closeTransport: 'manual', disposeStore: 'manual' });
    const send = vi.spyOn(h.lifecycle.actor, 'send');
    const first = h.startHandler();
    const second = h.startHandler();
    second.settle();
    await flush();
    expect(send).not.toHaveBeenCalled();
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(0);

    h.stdin.end();
    expect(send.mock.calls).toEqual([[expect.objectContaining({ type: 'stdin.end', inflight: 1 })]]);
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(1);

    const late = h.startHandler();
    first.settle();
    await flush();
    expect(typesSent(send)).toEqual(['stdin.end', 'handler.started', 'handler.settled']);
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(1);
    late.settle();
    await flush();
    expect(typesSent(send).at(-1)).toBe('handler.settled');
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(0);
  });

  it('observed: every handler event from the start, so a live view shows the count', async () => {
    const h = createHarness({ inspect: [() => {}] });
    const send = vi.spyOn(h.lifecycle.actor, 'send');
    const probe = h.startHandler();
    expect(typesSent(send)).toEqual(['handler.started']);
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(1);
    probe.settle();
    await flush();
    expect(typesSent(send)).toEqual(['handler.started', 'handler.settled']);
    expect(h.lifecycle.actor.getSnapshot().context.inflight).toBe(0);
  });
});
