// Does each real client accept what `qmd mcp config --client NAME` prints, and connect with it?
// (issue 32). The tests parse each configuration and start the server it names; this asks the
// clients themselves, with the releases on the npm registry. Each run gets a fresh HOME with the
// printed configuration in the file that client reads, and PATH=/usr/bin:/bin (this machine's
// Node 20, which qmd refuses): a server started through PATH would fail, so "connected" means
// the absolute paths in the configuration were used. The HTTP rows run against
// `qmd mcp --http --daemon`; "wrong token" replaces the printed token, and must not connect;
// "no index yet" names an index not made yet (a client set up before `collection add`).
//
// Usage: node bench/experiments/mcp-config/real-clients.mjs CLIENTS_DIR [--install]
//   CLIENTS_DIR gets (with --install): npm i opencode-ai@1.18.33 @openai/codex@0.171.0
//   @google/gemini-cli@0.61.0 @anthropic-ai/claude-code@2.1.332 (about 1.3 GB; never in the repo).
// Needs `npm run build`. Writes bench/experiments/mcp-config/results-real-clients.md.
// Codex 0.171 connects to servers only inside a session with a model (none here): its row shows
// what `codex mcp get --json` read from the file.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QMD = join(ROOT, 'dist/qmd.mjs');
const [clientsDir, flag] = process.argv.slice(2);
if (!clientsDir) {
  console.error('usage: node bench/experiments/mcp-config/real-clients.mjs CLIENTS_DIR [--install]');
  process.exit(2);
}
if (flag === '--install') {
  mkdirSync(clientsDir, { recursive: true });
  execFileSync(
    'npm',
    [
      'i',
      '--prefix',
      clientsDir,
      '--no-audit',
      '--no-fund',
      'opencode-ai@1.18.33',
      '@openai/codex@0.171.0',
      '@google/gemini-cli@0.61.0',
      '@anthropic-ai/claude-code@2.1.332',
    ],
    { stdio: 'inherit' },
  );
}
const bin = (name) => join(clientsDir, 'node_modules/.bin', name);
const node = process.execPath;

const work = mkdtempSync(join(tmpdir(), 'qmd-real-clients-'));
const runtime = join(work, 'run');
mkdirSync(runtime, { mode: 0o700 });
cpSync(join(ROOT, 'docs'), join(work, 'notes'), { recursive: true });
const index = join(work, 'index.sqlite');
const env = { ...process.env, QMD_INDEX: index, XDG_RUNTIME_DIR: runtime, XDG_CACHE_HOME: join(work, 'cache') };
const qmd = (args) => execFileSync(node, [QMD, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
qmd(['collection', 'add', join(work, 'notes'), '--name', 'docs']);
const PORT = String(18000 + Math.floor(Math.random() * 1000));
qmd(['mcp', '--http', '--daemon', '--port', PORT]);

/** How each client reads its servers: where the file goes in HOME, and how to ask it. */
const CLIENTS = {
  'claude-code': {
    file: '.claude.json',
    ask: (home) => run(bin('claude'), ['mcp', 'list'], home),
    connected: (out) => /✔ Connected|✓ Connected/.test(out),
  },
  'gemini-cli': {
    file: '.gemini/settings.json',
    prepare: (home) =>
      writeFileSync(join(home, '.gemini/trustedFolders.json'), JSON.stringify({ [home]: 'TRUST_FOLDER' })),
    ask: (home) =>
      run(node, [join(clientsDir, 'node_modules/@google/gemini-cli/bundle/gemini.js'), 'mcp', 'list'], home),
    connected: (out) => /- Connected/.test(out),
  },
  opencode: {
    file: '.config/opencode/opencode.json',
    ask: (home) => run(bin('opencode'), ['mcp', 'list'], home),
    connected: (out) => /✓ qmd connected/.test(out),
  },
  codex: {
    file: '.codex/config.toml',
    ask: (home) =>
      run(node, [join(clientsDir, 'node_modules/@openai/codex/bin/codex.js'), 'mcp', 'get', 'qmd', '--json'], home),
    connected: () => false,
    read: (out) => {
      const t = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)).transport;
      return t.type === 'stdio'
        ? `read: ${t.type}, ${t.command} ${t.args.join(' ')}, env ${Object.keys(t.env ?? {}).join(',') || 'none'}`
        : `read: ${t.type}, ${t.url}, headers ${Object.keys(t.http_headers ?? {}).join(',')}`;
    },
  },
};

function run(command, args, home) {
  const r = spawnSync(command, args, {
    cwd: home,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      CODEX_HOME: join(home, '.codex'),
      XDG_RUNTIME_DIR: runtime,
      PATH: '/usr/bin:/bin',
      NO_COLOR: '1',
      TERM: 'dumb',
    },
  });
  // stderr first: codex's JSON on stdout stays one piece at the end.
  return stripColours(`${r.stderr}${r.stdout}`);
}

/** Without terminal colour codes (ESC [ … m), which some clients write despite NO_COLOR. */
function stripColours(text) {
  return text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
}

/** [name, what goes before `mcp config`, after it]. "No index yet": a client set up before `collection add`. */
const FRESH = join(work, 'fresh', 'index.sqlite');
mkdirSync(dirname(FRESH));
const VARIANTS = [
  ['stdio', [], []],
  ['--shared', [], ['--shared']],
  ['--http', [], ['--http', '--port', PORT]],
  ['--http, wrong token', [], ['--http', '--port', PORT]],
  ['stdio, no index yet', ['--index', FRESH], []],
];
const rows = [];
for (const [client, how] of Object.entries(CLIENTS)) {
  for (const [variant, before, args] of VARIANTS) {
    const home = mkdtempSync(join(work, 'home-'));
    mkdirSync(join(home, dirname(how.file)), { recursive: true });
    let config = qmd([...before, 'mcp', 'config', '--client', client, ...args]);
    if (variant.includes('wrong')) config = config.replace(/Bearer [\w-]+/, 'Bearer not-the-token-0123456789');
    writeFileSync(join(home, how.file), config);
    chmodSync(join(home, how.file), 0o600);
    how.prepare?.(home);
    const out = how.ask(home);
    const verdict = how.read
      ? how.read(out)
      : how.connected(out)
        ? 'connected'
        : `not connected: ${out.trim().split('\n').at(-1)}`;
    rows.push(`| ${client} | ${variant} | ${verdict.replaceAll('|', '\\|')} |`);
    console.error(rows.at(-1));
  }
}
qmd(['mcp', 'stop']);
spawnSync(node, [QMD, 'mcp', 'stop', '--shared'], { env });
spawnSync(node, [QMD, '--index', FRESH, 'mcp', 'stop', '--shared'], { env });
if (existsSync(FRESH)) throw new Error(`a client's server made ${FRESH}`);
rmSync(work, { recursive: true, force: true });

const versions = ['claude --version', 'opencode --version'].map(
  (c) => `${c}: ${run(bin(c.split(' ')[0]), ['--version'], tmpdir()).trim()}`,
);
const text = [
  `# Real clients against \`qmd mcp config\` (${new Date().toISOString().slice(0, 10)}, node ${process.version})`,
  '',
  `Rerun: \`node bench/experiments/mcp-config/real-clients.mjs CLIENTS_DIR --install\`. ${versions.join('; ')}.`,
  '',
  '| client | configuration | what the client says |',
  '|---|---|---|',
  ...rows,
  '',
].join('\n');
writeFileSync(join(ROOT, 'bench/experiments/mcp-config/results-real-clients.md'), text);
console.log(text);
