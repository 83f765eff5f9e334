import { expect, it } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { startHarness } from './harness.js';

/**
 * `hang` ignores its signal and holds a ref'd interval forever (the stuck-native-call case),
 * so it gets a file of its own: this worker process is the only one that carries it.
 */
it('a hung handler stays in flight whatever aborts it, so only the drain deadline can pass it', async () => {
  const h = await startHarness({ failpoints: 'tool.query=hang' });
  const started = h.nextStart();
  const reply = h.call('query', { query: 'wal' }).catch((error: unknown) => error);
  await started;
  expect(h.gate.size).toBe(1);

  h.gate.abortAll();
  await h.server.close();
  expect(await reply).toMatchObject({ message: expect.stringMatching(/Connection closed/) });
  // Let every callback the aborts queued run: the handler still has not settled.
  for (let i = 0; i < 5; i++) await flush();
  expect(h.gate.size).toBe(1);

  await h.close();
});
