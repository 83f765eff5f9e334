/**
 * What node-llama-cpp 3.21.1's `resolveModelFile` asks of the host an `hf:` URI points at,
 * and what its `onProgress` reports, against a local HTTP server serving a generated GGUF
 * (nothing is downloaded from the Internet). Run: `npx tsx bench/experiments/model-download/serve-gguf.ts`
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '../../../test/support/gguf.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-dl-'));
const source = join(dir, 'source.gguf');
writeTinyModel(source, { dims: Number(process.argv[2] ?? 64) });
const body = readFileSync(source);
const requests: string[] = [];
const server = createServer((req, res) => {
  requests.push(`${req.method} ${req.url} range=${req.headers.range ?? '-'}`);
  if (!req.url?.startsWith('/ggml-org/embeddinggemma-300M-GGUF/resolve/main/embeddinggemma-300M-Q8_0.gguf')) {
    res.writeHead(404).end();
    return;
  }
  const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
  if (range) {
    const start = Number(range[1]);
    const end = range[2] ? Number(range[2]) : body.length - 1;
    res.writeHead(206, {
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${body.length}`,
      'accept-ranges': 'bytes',
    });
    res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { 'content-length': body.length, 'accept-ranges': 'bytes' });
  res.end(req.method === 'HEAD' ? undefined : body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
process.env.HF_ENDPOINT = `http://127.0.0.1:${port}/`;
const { resolveModelFile } = await import('node-llama-cpp');
const progress: string[] = [];
const started = performance.now();
const file = await resolveModelFile('hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf', {
  directory: join(dir, 'models'),
  download: 'auto',
  cli: false,
  onProgress: ({ totalSize, downloadedSize }) => progress.push(`${downloadedSize}/${totalSize}`),
});
console.log(
  `downloaded ${statSync(file).size} bytes (source ${body.length}) to ${file} in ${(performance.now() - started).toFixed(0)} ms`,
);
console.log(`requests:\n  ${requests.join('\n  ')}`);
console.log(
  `onProgress calls: ${progress.length}: ${progress.slice(0, 5).join(', ')} … ${progress.slice(-2).join(', ')}`,
);
server.close();
