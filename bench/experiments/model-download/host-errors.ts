/**
 * How node-llama-cpp 3.21.1's `resolveModelFile` meets a host that answers the model's URL with
 * an error: how long until it settles, how many requests it makes, and whether its `signal`
 * ends the wait. Run: `npx tsx bench/experiments/model-download/host-errors.ts STATUS [ABORT_MS]`
 * (STATUS 404, 500, 503; ABORT_MS aborts the signal after that long; the run gives up at 60 s).
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const status = Number(process.argv[2] ?? 500);
const abortMs = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const dir = mkdtempSync(join(tmpdir(), 'qmd-dl-err-'));
let requests = 0;
const server = createServer((_req, res) => {
  requests++;
  res.writeHead(status).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.HF_ENDPOINT = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
const { resolveModelFile } = await import('node-llama-cpp');
const controller = new AbortController();
if (abortMs !== undefined) setTimeout(() => controller.abort(new Error('aborted by the experiment')), abortMs);
const started = performance.now();
const outcome = await Promise.race([
  resolveModelFile('hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf', {
    directory: join(dir, 'models'),
    download: 'auto',
    cli: false,
    signal: controller.signal,
  }).then(
    () => 'resolved',
    (error: unknown) => `rejected: ${String(error).slice(0, 160)}`,
  ),
  new Promise((resolve) => setTimeout(() => resolve('still pending at 60 s'), 60_000).unref()),
]);
console.log(
  `HTTP ${status}${abortMs === undefined ? '' : `, abort at ${abortMs} ms`}: ${outcome} after ${(performance.now() - started).toFixed(0)} ms, ${requests} requests`,
);
server.closeAllConnections();
server.close();
process.exit(0);
