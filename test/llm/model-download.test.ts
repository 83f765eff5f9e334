/**
 * `downloadModelFile` against local HTTP servers the tests control: the whole file, resumed
 * from a `.part`, a host error at once (node-llama-cpp's downloader retried a 500 for minutes),
 * an abort mid-body that keeps what arrived, and a token sent only to the Hugging Face origin.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadModelFile } from '../../src/llm/model-download.js';
import { deferred } from '../support/deferred.js';

const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/m.gguf`;
}

/** Answers a range from its start, or the whole body. */
function ranged(req: IncomingMessage, res: ServerResponse, body = BODY): void {
  const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
  res.writeHead(from > 0 ? 206 : 200, { 'content-length': body.length - from });
  res.end(body.subarray(from));
}

afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

const target = () => join(mkdtempSync(join(tmpdir(), 'qmd-download-')), 'models', 'hf_x_m.gguf');
const signal = () => new AbortController().signal;

describe('downloadModelFile', () => {
  it('writes the whole file under its name, reporting progress up to the total', async () => {
    const url = await serve((req, res) => ranged(req, res));
    const file = target();
    const seen: number[] = [];
    await downloadModelFile(url, file, {
      signal: signal(),
      onProgress: ({ downloadedBytes, totalBytes }) => {
        expect(totalBytes).toBe(BODY.length);
        seen.push(downloadedBytes);
      },
    });
    expect(readFileSync(file).equals(BODY)).toBe(true);
    expect(existsSync(`${file}.part`)).toBe(false);
    expect(seen.at(-1)).toBe(BODY.length);
  });

  it('resumes a .part left by an earlier try with a Range request', async () => {
    const ranges: string[] = [];
    const url = await serve((req, res) => {
      ranges.push(req.headers.range ?? 'none');
      ranged(req, res);
    });
    const file = target();
    await downloadModelFile(url, join(file, '..', 'warmup.gguf'), { signal: signal() }); // makes the folder
    writeFileSync(`${file}.part`, BODY.subarray(0, 100_000));
    await downloadModelFile(url, file, { signal: signal() });
    expect(ranges.at(-1)).toBe('bytes=100000-');
    expect(readFileSync(file).equals(BODY)).toBe(true);
  });

  it('a host error is one error at once: status, text and URL; nothing is written', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.writeHead(503, 'Service Unavailable').end();
    });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      `HTTP 503 Service Unavailable from ${url}`,
    );
    expect(requests).toBe(1);
    expect(existsSync(file)).toBe(false);
  });

  it('an abort mid-body settles at once and keeps what was written, which the next try resumes', async () => {
    const half = deferred<void>();
    const url = await serve((req, res) => {
      if (req.headers.range !== undefined) return ranged(req, res);
      res.writeHead(200, { 'content-length': BODY.length });
      res.write(BODY.subarray(0, 150_000)); // and nothing more: a stalled host
    });
    const file = target();
    const controller = new AbortController();
    const pending = downloadModelFile(url, file, {
      signal: controller.signal,
      onProgress: ({ downloadedBytes }) => {
        if (downloadedBytes >= 150_000) half.resolve();
      },
    });
    await half.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // What reached the disk before the abort (the stream's buffer is dropped): a prefix of the file.
    const kept = readFileSync(`${file}.part`);
    expect(kept.length).toBeLessThanOrEqual(150_000);
    expect(kept.equals(BODY.subarray(0, kept.length))).toBe(true);
    expect(existsSync(file)).toBe(false);
    await downloadModelFile(url, file, { signal: signal() });
    expect(readFileSync(file).equals(BODY)).toBe(true);
  });

  it('a 401 is asked again with HF_TOKEN, but only of the Hugging Face origin', async () => {
    const auth: string[] = [];
    const url = await serve((req, res) => {
      auth.push(req.headers.authorization ?? 'none');
      if (req.headers.authorization !== 'Bearer secret') return void res.writeHead(401, 'Unauthorized').end();
      ranged(req, res);
    });
    const env = { HF_TOKEN: 'secret', HF_HOME: join(tmpdir(), 'qmd-no-hf-home') };
    await expect(
      downloadModelFile(url, target(), { signal: signal(), env, tokenOrigin: 'https://huggingface.co' }),
    ).rejects.toThrow(/^HTTP 401 Unauthorized/);
    expect(auth).toEqual(['none']);
    const file = target();
    await downloadModelFile(url, file, { signal: signal(), env, tokenOrigin: new URL(url).origin });
    expect(auth).toEqual(['none', 'none', 'Bearer secret']);
    expect(readFileSync(file).equals(BODY)).toBe(true);
  });
});
