/**
 * A model host that misbehaves, as a person meets it: `qmd embed` and `qmd pull` fetch the
 * default embedding model from a local stand-in for Hugging Face (`HF_ENDPOINT`,
 * `test/support/model-server.ts`) that answers each case below, then `qmd embed` runs again
 * against a healthy host, as the person would once the network is fixed. For each: the exit
 * code, the seconds, what the models folder holds afterwards, and whether the next run worked
 * (a file saved under the model's name that is not the model poisons every later run).
 *
 *   npm run build && npx tsx bench/hub-cases.ts [--before DIST/qmd.mjs] [--cap-s 90]
 *
 * The stall case waits out the real default idle bound (30 s; `QMD_DOWNLOAD_IDLE_MS`). A run
 * still going after `--cap-s` seconds is killed and shown as such (a build without the bound
 * waits for ever). With `--before`, an older build is measured too, in a second table. Prints
 * the tables and writes bench/results-hub-cases.md.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tinyModelPath } from '../test/support/gguf.js';
import {
  DEFAULT_MODEL_PATH,
  type HubAnswer,
  type ModelServer,
  startModelServer,
} from '../test/support/model-server.js';
import { QMD_BIN, qmdEnv, tempWorkspace } from '../test/support/qmd.js';
import { spawnProcess } from '../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const BEFORE = arg('--before');
const CAP_S = Number(arg('--cap-s') ?? 90);
const RESULTS = fileURLToPath(new URL('./results-hub-cases.md', import.meta.url));

const model = readFileSync(tinyModelPath());
const half = Math.floor(model.length / 2);
const CASES: Array<{ name: string; answer: HubAnswer }> = [
  { name: 'good file (302 to the CDN, as the hub)', answer: { hub: model } },
  { name: 'HTML page (200 text/html)', answer: { html: '<!DOCTYPE html><html><body>Sign in</body></html>' } },
  { name: 'short body, no Content-Length', answer: { short: model, bytes: half } },
  { name: 'stall mid-body', answer: { stall: model, afterBytes: half } },
  { name: 'redirect loop', answer: { loop: true } },
  { name: 'body altered (SHA-256 differs)', answer: { hub: model, tamper: true } },
];

interface Run {
  code: string;
  seconds: number;
  stderr: string;
}

async function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const started = performance.now();
  const p = spawnProcess(process.execPath, [bin, ...args], { env });
  p.child.stdin?.end();
  const cap = setTimeout(() => p.kill(), CAP_S * 1000);
  const exit = await p.closed;
  clearTimeout(cap);
  const seconds = (performance.now() - started) / 1000;
  const code = exit.signal === 'SIGKILL' ? `killed at ${CAP_S} s` : String(exit.code ?? exit.signal);
  return { code, seconds, stderr: p.stderr() };
}

/** `hf_…gguf (417,920 B)`, `….part (208,960 B)`; `empty` when nothing is there. */
function modelsFolder(dir: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return 'no folder';
  }
  if (names.length === 0) return 'empty';
  return names
    .map((name) => {
      const size = statSync(join(dir, name)).size;
      const whole = !name.endsWith('.gguf')
        ? ''
        : readFileSync(join(dir, name)).equals(model)
          ? ', the model'
          : ', NOT the model';
      return `\`${name.replace(/^hf_ggml-org_embeddinggemma-300M-Q8_0/, 'MODEL')}\` (${size.toLocaleString('en')} B${whole})`;
    })
    .join(', ');
}

/** The line a person reads: the last of stderr, cut. */
function said(stderr: string): string {
  const line =
    stderr
      .split('\n')
      .filter((l) => l.startsWith('qmd:') || l.startsWith('The cached'))
      .at(-1) ?? '';
  const text = line
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'HOST')
    .replace(/hf:ggml-org\/embeddinggemma-300M-GGUF\/embeddinggemma-300M-Q8_0\.gguf/g, 'URI')
    .replace(/\/tmp\/\S+\/hf_ggml-org_embeddinggemma-300M-Q8_0/g, 'MODEL')
    .replace(/\/ggml-org\/embeddinggemma-300M-GGUF\/resolve\/main\/embeddinggemma-300M-Q8_0\.gguf/g, '/PATH');
  return (text.length > 220 ? `${text.slice(0, 220)}…` : text).replace(/\|/g, '\\|');
}

async function measure(bin: string, label: string): Promise<string[]> {
  const rows: string[] = [];
  const good = await startModelServer({ [DEFAULT_MODEL_PATH]: { hub: model } });
  try {
    for (const { name, answer } of CASES) {
      for (const command of ['embed', 'pull']) {
        const ws = tempWorkspace({ 'bread.md': '# Bread\n\nSourdough needs a starter.\n' });
        const cache = join(ws.dir, 'cache');
        const models = join(cache, 'qmd', 'models');
        mkdirSync(cache, { recursive: true });
        let hub: ModelServer | undefined;
        try {
          hub = await startModelServer({ [DEFAULT_MODEL_PATH]: answer });
          const env = (endpoint: string) =>
            qmdEnv(ws.index, { XDG_CACHE_HOME: cache, HF_ENDPOINT: endpoint, QMD_EMBED_THREADS: '1' });
          const added = await run(bin, ['collection', 'add', ws.notesDir, '--name', 'notes'], env(hub.endpoint));
          if (added.code !== '0') throw new Error(`${label}: collection add failed: ${added.stderr}`);
          const first = await run(bin, [command], env(hub.endpoint));
          const left = modelsFolder(models);
          await hub.close();
          hub = undefined;
          const next = await run(bin, ['embed'], env(good.endpoint));
          rows.push(
            `| ${name} | ${command} | ${first.code} | ${first.seconds.toFixed(1)} | ${left} | ${said(first.stderr)} | ${next.code} (${next.seconds.toFixed(1)} s) |`,
          );
          console.error(
            `${label}: ${name}, ${command}: exit ${first.code} in ${first.seconds.toFixed(1)} s; next embed ${next.code}`,
          );
        } finally {
          await hub?.close();
          ws.cleanup();
        }
      }
    }
  } finally {
    await good.close();
  }
  return rows;
}

const header = [
  '| host answers | command | exit | seconds | models folder after | what it said (last line) | next `qmd embed`, host healthy |',
  '|---|---|---:|---:|---|---|---|',
];
const after = await measure(QMD_BIN, 'this build');
const before = BEFORE === undefined ? undefined : await measure(BEFORE, 'before');
const report = [
  '# A model host that misbehaves (`bench/hub-cases.ts`)',
  '',
  `\`npx tsx bench/hub-cases.ts --cap-s ${CAP_S}${BEFORE === undefined ? '' : ` --before ${BEFORE}`}\`, Node ${process.version}, load ${loadavg()[0]?.toFixed(1)} at the end.`,
  `The default embedding model's URI (\`URI\`; \`HOST/PATH\` its URL), served by a local stand-in hub (\`HF_ENDPOINT\`) as a ${model.length.toLocaleString('en')}-byte generated GGUF; \`qmd pull\` with the reranker and expander off; default idle bound (30 s). \`MODEL\` is \`hf_ggml-org_embeddinggemma-300M-Q8_0\`. The last column runs \`qmd embed\` with the same cache against a healthy host: a file left under the model's name that is not the model fails it.`,
  '',
  '## This build',
  '',
  ...header,
  ...after,
  ...(before === undefined ? [] : ['', `## Before (\`${BEFORE}\`)`, '', ...header, ...before]),
  '',
].join('\n');
console.log(report);
writeFileSync(RESULTS, report);
