/**
 * The runtime's teardown order (`src/llm/runtime.ts`) with parts that record what they are
 * asked, so the order itself is checked, whatever llama.cpp does (test/llm/models.test.ts
 * runs the same teardown over the three real tiny models).
 */
import { describe, expect, it } from 'vitest';
import { LlmRuntime, type ModelRole, type RuntimePart } from '../../src/llm/runtime.js';
import { silentLog } from '../../src/log.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';

function part(role: ModelRole, events: string[], running?: Promise<void>): RuntimePart {
  return {
    role,
    report: () => ({ role, spec: `${role}.gguf`, loaded: true }),
    quiesce: async () => {
      events.push(`${role}: quiesce`);
      await running;
      events.push(`${role}: idle`);
    },
    disposeContexts: async () => {
      events.push(`${role}: contexts`);
    },
    disposeModels: async () => {
      events.push(`${role}: model`);
    },
  };
}

describe('the runtime’s teardown', () => {
  it('waits for every running call before disposing anything, then contexts, then models', async () => {
    const events: string[] = [];
    const ranking = deferred();
    const runtime = new LlmRuntime({ log: silentLog });
    for (const p of [part('embed', events), part('rerank', events, ranking.promise), part('expand', events)]) {
      runtime.add(p);
    }
    const disposal = runtime.dispose();
    for (let i = 0; i < 5; i++) await flush();
    // A ranking still runs natively: nothing is disposed, even the parts already idle.
    expect(events).toEqual(['embed: quiesce', 'rerank: quiesce', 'expand: quiesce', 'embed: idle', 'expand: idle']);
    expect(runtime.signal.aborted).toBe(true);
    ranking.resolve();
    await disposal;
    expect(events.slice(5)).toEqual([
      'rerank: idle',
      'embed: contexts',
      'rerank: contexts',
      'expand: contexts',
      'embed: model',
      'rerank: model',
      'expand: model',
    ]);
  });

  it('is idempotent, refuses a part afterwards, and a failed step does not stop the others', async () => {
    const events: string[] = [];
    const runtime = new LlmRuntime({ log: silentLog });
    const failing = { ...part('rerank', events), disposeContexts: () => Promise.reject(new Error('context busy')) };
    runtime.add(failing);
    runtime.add(part('embed', events));
    const first = runtime.dispose();
    expect(runtime.dispose()).toBe(first);
    await expect(first).rejects.toThrow('context busy');
    expect(events).toContain('embed: contexts');
    expect(events).toContain('rerank: model');
    expect(() => runtime.add(part('expand', events))).toThrow(expect.objectContaining({ code: 'DISPOSED' }));
    await expect(runtime.llama()).rejects.toMatchObject({ code: 'DISPOSED' });
  });

  it('reports the GPU choice and its parts without loading anything', async () => {
    let imports = 0;
    const runtime = new LlmRuntime({
      log: silentLog,
      gpu: 'off',
      threads: 3,
      importLlama: () => {
        imports++;
        return import('node-llama-cpp');
      },
    });
    runtime.add(part('embed', []));
    expect(await runtime.report()).toEqual({
      requested: 'off',
      threads: 3,
      models: [{ role: 'embed', spec: 'embed.gguf', loaded: true }],
    });
    await runtime.dispose();
    expect(imports).toBe(0);
  });
});
