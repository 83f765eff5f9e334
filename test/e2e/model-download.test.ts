/**
 * Getting the default `hf:` model, through the built binary, with nothing from the Internet:
 * offline, `qmd embed` says in one line how to get it (the flag, the variable, the cache folder,
 * the exact file, the commands); online, it downloads from the host `HF_ENDPOINT` names (here
 * a local HTTP server serving a generated GGUF: `test/support/model-server.ts`) with progress
 * lines when piped, a bar drawn in place and cleared in a terminal (`qmd pull` under a
 * pseudo-terminal, the download held half-way until the bar is on the screen); a search whose
 * model is not downloaded says how to get it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/cli/formats/collections.js';
import { DEFAULT_EMBED_MODEL } from '../../src/llm/index.js';
import { deferred } from '../support/deferred.js';
import { tinyModelPath } from '../support/gguf.js';
import {
  DEFAULT_MODEL_FILE,
  DEFAULT_MODEL_PATH,
  type HubAnswer,
  type ModelServer,
  startModelServer,
} from '../support/model-server.js';
import { ptyExit, runInPty, screenLines } from '../support/pty.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';

const ws = tempWorkspace({
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  'garden.md': '# Garden\n\nBasil and tomatoes grow together in summer.\n',
});
/** This file's own cache home: the default model is never in it unless downloaded here. */
const cache = join(ws.dir, 'cache');
const models = join(cache, 'qmd', 'models');
const file = join(models, DEFAULT_MODEL_FILE);
let server: ModelServer;
let offline: string;

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const env = (endpoint: string) =>
  qmdEnv(ws.index, { XDG_CACHE_HOME: cache, QMD_EMBED_THREADS: '1', HF_ENDPOINT: endpoint });
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

beforeAll(async () => {
  server = await startModelServer({ [DEFAULT_MODEL_PATH]: readFileSync(tinyModelPath()) });
  offline = `http://127.0.0.1:${await closedPort()}/`;
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env(offline));
  expect(added.code, added.stderr).toBe(0);
});
afterAll(async () => {
  await server.close();
  ws.cleanup();
});

describe('the default model, not downloaded', () => {
  it('offline, qmd embed exits 1 with one line: the flag, the variable, the folder, the file, the commands', async () => {
    const run = await runQmd(['embed'], env(offline));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(lines(run.stderr)).toHaveLength(1);
    const [line = ''] = lines(run.stderr);
    expect(
      line.startsWith(`qmd: cannot download the embedding model ${DEFAULT_EMBED_MODEL}: ${offline.slice(0, -1)} `),
    ).toBe(true);
    expect(line).toMatch(/ is unreachable \(fetch failed: .*\): run qmd embed when online to download it, /);
    expect(line).toContain(`curl -fL --create-dirs -o ${file} ${offline}${DEFAULT_MODEL_PATH.slice(1)};`);
    expect(line).toContain('or use a local model: --embed-model PATH.gguf or QMD_EMBED_MODEL=PATH.gguf');
    expect(existsSync(file)).toBe(false);
    const status = await runQmd(['status'], env(offline));
    expect(status.stdout).toContain(`Embedding model: none yet; qmd embed uses ${DEFAULT_EMBED_MODEL}`);
  });
});

describe('downloading it', () => {
  it('piped: a line when it starts, progress lines, a line when done; the exact file; stdout only the summary', async () => {
    const run = await runQmd(['embed'], env(server.endpoint));
    expect(run.code, run.stderr).toBe(0);
    const said = lines(run.stderr);
    expect(said[0]).toBe(`Downloading the embedding model ${DEFAULT_EMBED_MODEL} to ${models}...`);
    expect(said[1]).toMatch(/^Downloading: \d+% \(\d+\.\d of 0\.4 MB/);
    expect(said).toContainEqual(
      expect.stringMatching(new RegExp(`^Downloaded the embedding model to ${file} \\(0\\.4 MB in [\\d.]+ s\\)$`)),
    );
    expect(lines(run.stdout)).toEqual([expect.stringMatching(/^Embedded 2 chunks, /)]);
    expect(readFileSync(file).equals(readFileSync(tinyModelPath()))).toBe(true);
    expect(server.requests).toContain(`GET ${DEFAULT_MODEL_PATH}`);

    // From the cache now: searches need no host.
    const query = await runQmd(['query', 'sourdough', '--json', '--explain'], env(offline));
    expect(query.code, query.stderr).toBe(0);
    expect(JSON.parse(query.stdout)[0]).toMatchObject({ explain: { mode: 'hybrid' } });
    const status = await runQmd(['status'], env(offline));
    expect(status.stdout).toContain(`Embedding model: ${DEFAULT_EMBED_MODEL} (sha256:`);
    expect(status.stdout).toContain(`, cached at ${file}`);
  });

  it('the cache emptied: query is BM25 with one warning saying how to get it; vsearch exits 1 with it', async () => {
    rmSync(file);
    const how =
      `the embedding model ${DEFAULT_EMBED_MODEL} is not downloaded yet (searches never download): run qmd embed ` +
      `when online to download it, or fetch it yourself into the models folder: curl -fL --create-dirs -o ${file} ` +
      `${offline}${DEFAULT_MODEL_PATH.slice(1)}; or use a local model: --embed-model PATH.gguf or QMD_EMBED_MODEL=PATH.gguf`;
    const query = await runQmd(['query', 'sourdough', '--json', '--explain'], env(offline));
    expect(query.code, query.stderr).toBe(0);
    expect(JSON.parse(query.stdout)[0]).toMatchObject({ explain: { mode: 'bm25' } });
    expect(lines(query.stderr)).toEqual([`QMD Warning: ${how}; searching with BM25 only`]);
    const vsearch = await runQmd(['vsearch', 'sourdough'], env(offline));
    expect(vsearch.code).toBe(1);
    expect(vsearch.stderr).toBe(`qmd: ${how}\n`);
    const status = await runQmd(['status'], env(offline));
    expect(status.stdout).toContain(`: not downloaded (${file} is missing): run qmd embed when online`);
  });
});

describe('in a terminal', () => {
  it('qmd pull draws the download bar in place, clears it, then says what it pulled', async () => {
    const body = readFileSync(tinyModelPath());
    const release = deferred();
    const held = await startModelServer(
      { [DEFAULT_MODEL_PATH]: body },
      {
        hold: { afterBytes: Math.floor(body.length / 2), until: release.promise },
      },
    );
    const ownCache = join(ws.dir, 'pty-cache');
    const pulledFile = join(ownCache, 'qmd', 'models', DEFAULT_MODEL_FILE);
    const p = runInPty(process.execPath, [QMD_BIN, 'pull'], {
      env: qmdEnv(join(ws.dir, 'no-index.sqlite'), {
        XDG_CACHE_HOME: ownCache,
        HF_ENDPOINT: held.endpoint,
        QMD_RERANK_MODEL: 'off',
        QMD_EXPAND_MODEL: 'off',
      }),
    });
    try {
      // Half the file is here and the rest is held: the bar must be on the screen now.
      const frame = await p.waitFor(
        (output) => /\rDownloading \[#*-+\] \d+% \([\d.]+ of 0\.4 MB/.exec(output)?.[0],
        'the download bar',
      );
      expect(frame.startsWith('\r')).toBe(true);
      release.resolve();
      const exit = await ptyExit(p, 60_000);
      expect(exit, p.output()).toEqual({ code: 0, signal: null });
      const output = p.output();
      // Drawn in place (a carriage return, never a new line per frame), then erased.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase-line escape is what is checked.
      expect(output).toMatch(/Downloading \[[#-]+\][^\n]*\r\x1b\[K/);
      const screen = screenLines(output).filter((line) => line !== '');
      expect(screen.some((line) => line.startsWith('Downloading ['))).toBe(false);
      expect(screen).toContain('Pulling models');
      expect(screen).toContainEqual(
        `- ${DEFAULT_EMBED_MODEL} -> ${pulledFile} (${formatBytes(body.length)}, downloaded)`,
      );
      expect(screen.slice(-2)).toEqual(['- rerank: off', '- expand: off']);
      expect(readFileSync(pulledFile).equals(body)).toBe(true);
    } finally {
      release.resolve();
      p.kill();
      await held.close();
    }
  });
});

/**
 * The stand-in hub misbehaving, one way each (docs/design.md §6, "Models"): the command exits 1
 * with one line saying what the host did, nothing is left under the model's name, and the next
 * run against a healthy host downloads the model and embeds.
 */
describe('a host that misbehaves never poisons the cache', () => {
  const body = readFileSync(tinyModelPath());
  const half = Math.floor(body.length / 2);
  const cases: Array<[string, HubAnswer, RegExp, string[]]> = [
    [
      'a 200 text/html page (a proxy or a login page)',
      { html: '<!DOCTYPE html><html><body>Sign in</body></html>' },
      /answered with a web page \(text\/html\), not the model: a proxy or a login page answered in its place/,
      [],
    ],
    [
      'a body cut short with no Content-Length',
      { short: body, bytes: half },
      new RegExp(
        `is not a whole model: it was cut short \\(${half} bytes, of the ${body.length} its header describes\\); try again`,
      ),
      [],
    ],
    [
      'a stall mid-body (QMD_DOWNLOAD_IDLE_MS=1000)',
      { stall: body, afterBytes: half },
      /no data from http:\/\/127\.0\.0\.1:\d+ for 1 s \(QMD_DOWNLOAD_IDLE_MS\): the download stalled after [\d.]+ MB; run it again to resume/,
      [`${DEFAULT_MODEL_FILE}.part`],
    ],
    [
      'a redirect loop',
      { loop: true },
      /redirected more than 10 times \(last to \S+\): a proxy or mirror is sending it round in a loop/,
      [],
    ],
    [
      'a body whose SHA-256 is not the one announced',
      { hub: body, tamper: true },
      /the file's SHA-256 \([0-9a-f]{12}…\) is not the one the hub announced/,
      [],
    ],
  ];
  for (const [name, answer, said, left] of cases) {
    it(`${name}: exit 1, one line, nothing under the model's name; the next run downloads it`, async () => {
      const own = join(ws.dir, `bad-${cases.findIndex((c) => c[0] === name)}`);
      const ownModels = join(own, 'qmd', 'models');
      const bad = await startModelServer({ [DEFAULT_MODEL_PATH]: answer });
      const good = await startModelServer({ [DEFAULT_MODEL_PATH]: { hub: body } });
      try {
        const at = (endpoint: string) =>
          qmdEnv(ws.index, {
            XDG_CACHE_HOME: own,
            QMD_EMBED_THREADS: '1',
            HF_ENDPOINT: endpoint,
            QMD_DOWNLOAD_IDLE_MS: '1000',
          });
        const pulled = await runQmd(['pull'], at(bad.endpoint));
        expect(pulled.code, pulled.stderr).toBe(1);
        const [line = '', ...more] = lines(pulled.stderr).filter((l) => !l.startsWith('Downloading'));
        expect(more).toEqual([]);
        expect(line).toMatch(new RegExp(`^qmd: could not download the embedding model ${DEFAULT_EMBED_MODEL}: `));
        expect(line).toMatch(said);
        expect(readdirSync(ownModels)).toEqual(left);
        const next = await runQmd(['embed'], at(good.endpoint));
        expect(next.code, next.stderr).toBe(0);
        expect(readFileSync(join(ownModels, DEFAULT_MODEL_FILE)).equals(body)).toBe(true);
      } finally {
        await bad.close();
        await good.close();
      }
    });
  }

  it('a page an older release saved under the model’s name: named by a search, fetched again by qmd pull', async () => {
    const own = join(ws.dir, 'poisoned');
    const cached = join(own, 'qmd', 'models', DEFAULT_MODEL_FILE);
    mkdirSync(dirname(cached), { recursive: true });
    writeFileSync(cached, '<!DOCTYPE html><html><body>Sign in</body></html>');
    const good = await startModelServer({ [DEFAULT_MODEL_PATH]: { hub: body } });
    try {
      const at = qmdEnv(ws.index, { XDG_CACHE_HOME: own, QMD_EMBED_THREADS: '1', HF_ENDPOINT: good.endpoint });
      const vsearch = await runQmd(['vsearch', 'sourdough'], at);
      expect(vsearch.code).toBe(1);
      expect(vsearch.stderr).toBe(
        `qmd: the cached embedding model ${cached} is not usable: it is a web page (HTML), not a GGUF model; run qmd embed to fetch it again (searches never download)\n`,
      );
      const pulled = await runQmd(['pull'], at);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stderr).toContain(
        `The cached embedding model ${cached} was not usable (it is a web page (HTML), not a GGUF model): deleted it, fetching it again`,
      );
      expect(pulled.stdout).toContain(`- ${DEFAULT_EMBED_MODEL} -> ${cached} (${formatBytes(body.length)}, refreshed)`);
      expect(readFileSync(cached).equals(body)).toBe(true);
    } finally {
      await good.close();
    }
  });
});
