/**
 * What only a fresh process can show: which modules were loaded, what reached stdout, and
 * whether the process survived a dispose while llama.cpp was computing.
 */
import { describe, expect, it } from 'vitest';
import { runFixture } from './helpers.js';

describe('in a child process', () => {
  it('importing src/llm and creating an embedder does not load node-llama-cpp; embedding does', async () => {
    const child = await runFixture('lazy-import');
    expect(child).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(child.stdout)).toEqual({ imported: false, embedded: true, vector: 64 });
  });

  it('nothing reaches stdout while the model loads and embeds, even at llama.cpp debug level', async () => {
    const child = await runFixture('quiet-stdout', [], { NODE_LLAMA_CPP_LOG_LEVEL: 'debug' });
    expect(child).toMatchObject({ code: 0, signal: null, stdout: '' });
    expect(child.stderr).toContain('embedded 64,64,64');
    // The lines were produced, and went to stderr through the logger:
    expect(child.stderr).toMatch(/^llama\.cpp: .*load/m);
  });

  it('dispose() while an embedding runs natively waits for it: no crash, ever', async () => {
    // 3 processes × 8 rounds, disposing after 0…512 event-loop turns.
    const turns = ['0', '1', '2', '4', '16', '64', '256', '512'];
    const children = await Promise.all([1, 2, 3].map(() => runFixture('dispose-running', turns, {}, 200_000)));
    const rounds: Array<{ k: number; runningAtDispose: number; order: string[] }> = [];
    for (const child of children) {
      expect(child, child.stderr).toMatchObject({ code: 0, signal: null });
      for (const line of child.stdout.split('\n')) if (line.startsWith('{')) rounds.push(JSON.parse(line));
    }
    expect(rounds).toHaveLength(24);
    for (const round of rounds) {
      // Either called off before llama.cpp started, or completed before dispose() resolved.
      expect([
        ['DISPOSED', 'disposed'],
        ['vector 64', 'disposed'],
      ]).toContainEqual(round.order);
      if (round.runningAtDispose === 1 && round.order[0] === 'vector 64') continue;
      expect(round.runningAtDispose === 0 || round.order[0] === 'DISPOSED').toBe(true);
    }
    // The case that matters happened: a call running at dispose() completed first.
    expect(rounds.some((r) => r.runningAtDispose === 1 && r.order[0] === 'vector 64')).toBe(true);
  }, 240_000); // three processes each paying ~1 s (up to ~6 s on a busy machine) to start llama.cpp
});
