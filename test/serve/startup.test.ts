import { describe, expect, it } from 'vitest';

describe('STARTUP_PPID', () => {
  it("is read once per process: a later copy of the module (the code-cached script's) takes the first one's value", async () => {
    const first = await import('../../src/serve/startup.js');
    expect(first.STARTUP_PPID).toBe(process.ppid);
    const store = globalThis as Record<symbol, unknown>;
    const key = Symbol.for('qmd.startup.ppid');
    const kept = store[key];
    store[key] = 424242; // as if the parent had changed since the first copy read it
    try {
      // Another module instance of the same file, as the script's bundled copy is.
      const copy = new URL('../../src/serve/startup.ts?second-copy', import.meta.url).href;
      const second = (await import(copy)) as typeof first;
      expect(second.STARTUP_PPID).toBe(424242);
    } finally {
      store[key] = kept;
    }
  });
});
