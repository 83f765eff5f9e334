/**
 * `downloadModelFile` against local HTTP servers the tests control: the whole file, resumed
 * from a `.part`, a host error at once (node-llama-cpp's downloader retried a 500 for minutes),
 * an abort mid-body that keeps what arrived, a token sent only to the Hugging Face origin; and
 * what must never take the model's name (docs/design.md §6, "Models"): a web page, a body cut
 * short with no length, a body whose SHA-256 is not the one the hub announced, a stalled host
 * (on an injected timer), a redirect loop.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadModelFile, type IdleTimers, MAX_REDIRECTS } from '../../src/llm/model-download.js';
import { deferred } from '../support/deferred.js';
import { tinyModelPath } from '../support/gguf.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

/** A real (tiny) GGUF model: every check a download makes passes on it. */
const BODY = readFileSync(tinyModelPath());
const HALF = Math.floor(BODY.length / 2);
const servers: Server[] = [];
const hubs: ModelServer[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/m.gguf`;
}

async function hub(answer: Parameters<typeof startModelServer>[0][string]): Promise<{ url: string; hub: ModelServer }> {
  const started = await startModelServer({ '/u/r/resolve/main/m.gguf': answer });
  hubs.push(started);
  return { url: `${started.endpoint}u/r/resolve/main/m.gguf`, hub: started };
}

/** Answers a range from its start, or the whole body. */
function ranged(req: IncomingMessage, res: ServerResponse, body = BODY): void {
  const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
  res.writeHead(from > 0 ? 206 : 200, { 'content-length': body.length - from });
  res.end(body.subarray(from));
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  for (const h of hubs.splice(0)) await h.close();
});

const target = () => join(mkdtempSync(join(tmpdir(), 'qmd-download-')), 'models', 'hf_x_m.gguf');
const signal = () => new AbortController().signal;
const left = (file: string) => readdirSync(dirname(file)).sort();

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
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.part`, BODY.subarray(0, 100_000));
    await downloadModelFile(url, file, { signal: signal() });
    expect(ranges).toEqual(['bytes=100000-']);
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
      res.write(BODY.subarray(0, HALF)); // and nothing more: a stalled host
    });
    const file = target();
    const controller = new AbortController();
    const pending = downloadModelFile(url, file, {
      signal: controller.signal,
      onProgress: ({ downloadedBytes }) => {
        if (downloadedBytes >= HALF) half.resolve();
      },
    });
    await half.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // What reached the disk before the abort (the stream's buffer is dropped): a prefix of the file.
    const kept = readFileSync(`${file}.part`);
    expect(kept.length).toBeLessThanOrEqual(HALF);
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

describe('what never takes the model’s name', () => {
  it('as the hub serves it (302 to its CDN with X-Linked-Size and X-Linked-Etag): fetched and checked', async () => {
    const { url, hub: h } = await hub({ hub: BODY });
    const file = target();
    const totals: number[] = [];
    await downloadModelFile(url, file, { signal: signal(), onProgress: (p) => totals.push(p.totalBytes) });
    expect(readFileSync(file).equals(BODY)).toBe(true);
    expect(h.requests).toEqual(['GET /u/r/resolve/main/m.gguf', expect.stringMatching(/^GET \/cdn\/[0-9a-f]{64}$/)]);
    expect(new Set(totals)).toEqual(new Set([BODY.length]));
  });

  it('a body whose SHA-256 is not the one the hub announced: refused, nothing left', async () => {
    const { url } = await hub({ hub: BODY, tamper: true });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      /^the file's SHA-256 \([0-9a-f]{12}…\) is not the one the hub announced \([0-9a-f]{12}…\): it was damaged or altered on the way; try again$/,
    );
    expect(left(file)).toEqual([]);
  });

  it('a 200 text/html page (a proxy, a login page): refused before its body, nothing left', async () => {
    const { url, hub: h } = await hub({ html: '<!DOCTYPE html><html><body>Sign in to continue</body></html>' });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      `${new URL(url).origin} answered with a web page (text/html), not the model: a proxy or a login page answered in its place (open ${url} in a browser to see it, or set HF_ENDPOINT to a mirror)`,
    );
    expect(left(file)).toEqual([]);
    expect(h.requests).toHaveLength(1);
  });

  it('a web page sent as a binary type: refused at its first bytes, nothing left', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end('<!DOCTYPE html><html>portal</html>');
    });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      'the host sent a web page, not the model: a proxy or a login page answered in its place',
    );
    expect(left(file)).toEqual([]);
  });

  it('a body cut short with no Content-Length: its header tells, nothing left', async () => {
    const { url } = await hub({ short: BODY, bytes: HALF });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      `what ${new URL(url).origin} sent is not a whole model: it was cut short (${HALF} bytes, of the ${BODY.length} its header describes); try again`,
    );
    expect(left(file)).toEqual([]);
  });

  it('a host that stalls mid-body: given up after the idle bound (an injected timer), the part kept for the next try', async () => {
    const { url } = await hub({ stall: BODY, afterBytes: HALF });
    const file = target();
    const timers = fakeTimers();
    const arrived = deferred<void>();
    const pending = downloadModelFile(url, file, {
      signal: signal(),
      idleMs: 30_000,
      timers,
      onProgress: ({ downloadedBytes }) => {
        if (downloadedBytes >= HALF) arrived.resolve();
      },
    });
    await arrived.promise;
    expect(timers.armedMs()).toBe(30_000);
    timers.fire();
    const error = await pending.then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(left(file)).toEqual(['hf_x_m.gguf.part']);
    // What reached the disk (a prefix of the file) is what the line counts.
    const kept = readFileSync(`${file}.part`);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.equals(BODY.subarray(0, kept.length))).toBe(true);
    expect(error?.message).toBe(
      `no data from ${new URL(url).origin} for 30 s (QMD_DOWNLOAD_IDLE_MS): the download stalled after ${(kept.length / 1e6).toFixed(1)} MB; run it again to resume`,
    );
    // The host is well again: the next try asks for the rest.
    const ranges: string[] = [];
    const well = await serve((req, res) => {
      ranges.push(req.headers.range ?? 'none');
      ranged(req, res);
    });
    await downloadModelFile(well, file, { signal: signal() });
    expect(ranges[0]).toMatch(/^bytes=\d+-$/);
    expect(readFileSync(file).equals(BODY)).toBe(true);
  });

  it('a host that never answers: the same bound covers the wait for its headers', async () => {
    const url = await serve(() => {
      // Accepts, never answers.
    });
    const file = target();
    const timers = fakeTimers();
    const pending = downloadModelFile(url, file, { signal: signal(), idleMs: 5_000, timers });
    timers.fire();
    await expect(pending).rejects.toThrow(/ for 5 s \(QMD_DOWNLOAD_IDLE_MS\): the download stalled; try again later$/);
    expect(existsSync(file)).toBe(false);
  });

  it(`a redirect loop: given up after ${MAX_REDIRECTS} redirects, nothing written`, async () => {
    const { url, hub: h } = await hub({ loop: true });
    const file = target();
    await expect(downloadModelFile(url, file, { signal: signal() })).rejects.toThrow(
      `${url} redirected more than ${MAX_REDIRECTS} times (last to ${url}): a proxy or mirror is sending it round in a loop`,
    );
    expect(h.requests).toHaveLength(MAX_REDIRECTS + 1);
    expect(left(file)).toEqual([]);
  });

  it('a link planted at NAME.part is removed, never written through', async () => {
    const url = await serve((req, res) => ranged(req, res));
    const file = target();
    mkdirSync(dirname(file), { recursive: true });
    const victim = join(dirname(file), '..', 'victim.txt');
    writeFileSync(victim, 'keep me');
    symlinkSync(victim, `${file}.part`);
    await downloadModelFile(url, file, { signal: signal() });
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(readFileSync(file).equals(BODY)).toBe(true);
  });
});

/** Timers whose one pending callback the test fires itself. */
function fakeTimers(): IdleTimers & { fire(): void; armedMs(): number | undefined } {
  let pending: { callback: () => void; ms: number; id: number } | undefined;
  let next = 0;
  return {
    set(callback, ms) {
      pending = { callback, ms, id: ++next };
      return pending.id;
    },
    clear(handle) {
      if (pending?.id === handle) pending = undefined;
    },
    fire() {
      const due = pending;
      pending = undefined;
      due?.callback();
    },
    armedMs: () => pending?.ms,
  };
}
