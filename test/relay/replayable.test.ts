/**
 * What a relay sends again after its server went away (`src/relay/replayable.ts`) against what
 * the server really serves: every tool the MCP server lists must be decided about, and only a
 * tool that says it only reads may be repeated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReplayable, REPLAYABLE_TOOLS } from '../../src/relay/replayable.js';
import { type Harness, startHarness } from '../mcp/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('requests a relay may send twice', () => {
  it('are exactly the tools the server lists, each of them read-only and idempotent', async () => {
    const { tools } = await h.client.listTools();
    expect([...REPLAYABLE_TOOLS].sort()).toEqual(tools.map((t) => t.name).sort());
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, idempotentHint: true });
      expect(isReplayable('tools/call', { name: tool.name, arguments: {} })).toBe(true);
    }
  });

  it('and the MCP reads; a tool or method of unknown effect is not repeated', () => {
    for (const method of ['ping', 'tools/list', 'resources/read', 'resources/list', 'initialize', 'server/discover'])
      expect(isReplayable(method, {}), method).toBe(true);
    expect(isReplayable('tools/call', { name: 'write_note' })).toBe(false);
    expect(isReplayable('tools/call', {})).toBe(false);
    expect(isReplayable('tools/call', undefined)).toBe(false);
    expect(isReplayable('tasks/cancel', {})).toBe(false);
    expect(isReplayable('sampling/createMessage', {})).toBe(false);
  });
});
