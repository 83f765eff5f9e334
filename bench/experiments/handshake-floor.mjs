// Experiment (not part of `npm run bench`): the cheapest `initialize` reply a qmd MCP server could
// give (issue 44 asks for ≤ 0.6× the bare SDK server's CPU time to that reply). Loading
// '@modelcontextprotocol/server' alone costs about what the bare SDK server pays in all, so this
// server answers `initialize` with its own small code, no SDK and no zod loaded first, yet with
// what qmd really needs before that reply: the index opened read-only with better-sqlite3 (the
// addon load is the cost) and its collections and contexts read for the instructions. Right
// after the reply (setImmediate) it loads the SDK, builds an McpServer with one tool (as
// bench/contenders/sdk-server.mjs does), connects it to a transport fed from the same stdin
// reader, replays the `initialize` into it (its answer dropped: the client has one) and hands it
// every line that came meanwhile; then it prints `SDK_READY <cpu ms> <ms since start>` on stderr
// (cpu: the process's user + system time): from there it could answer `tools/list`. It leaves on
// stdin EOF once the SDK is in.
//
// Serve:   QMD_INDEX=INDEX.sqlite node bench/experiments/handshake-floor.mjs
//          (HANDSHAKE_FLOOR_CACHE=DIR: Node's compile cache there, as qmd keeps one; `off`: none)
// Measure: QMD_INDEX=INDEX.sqlite node bench/experiments/handshake-floor.mjs --measure ROUNDS
//          interleaved rounds (round 0 warms the page cache and the code caches, not counted) of
//          the empty floor (bench/contenders/floor.mjs), the bare SDK server, this server with and
//          without a compile cache, and `node dist/qmd.mjs mcp` (its own XDG_CACHE_HOME under
//          /tmp); CPU and wall time to the `initialize` reply, read as startup-cpu.mjs does (by
//          first-reply-preload.mjs), and this server's SDK_READY. Children run on this node.
import { createRequire, enableCompileCache } from 'node:module';

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

function serve() {
  const cacheDir = process.env.HANDSHAKE_FLOOR_CACHE ?? `${process.env.TMPDIR ?? '/tmp'}/qmd-handshake-floor-cache`;
  if (cacheDir !== 'off') enableCompileCache(cacheDir);
  const indexPath = process.env.QMD_INDEX;
  if (!indexPath) throw new Error('QMD_INDEX: the index to open');
  const require = createRequire(import.meta.url);

  let db;
  let transport; // the SDK's side, once it is in
  let initialize; // the request, replayed into the SDK
  const early = []; // lines that came after `initialize` and before the SDK
  let ended = false;
  let buffered = '';

  const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

  function instructions(collections, contexts) {
    const documents = collections.reduce((sum, c) => sum + c.documents, 0);
    const lines = [`qmd searches ${documents} local markdown documents in ${collections.length} collection(s):`];
    for (const c of collections.slice(0, 30)) lines.push(`  - "${c.name}" (${c.documents} documents) at ${c.root}`);
    if (contexts.length > 0) lines.push('', 'What the notes are (contexts):');
    for (const c of contexts.slice(0, 30)) lines.push(`  - ${c.collection ?? ''}/${c.prefix}: ${c.text.slice(0, 160)}`);
    lines.push(
      '',
      'How to use it: `query` finds documents, `get` reads one, `multi_get` several, `status` shows the index.',
    );
    return lines.join('\n');
  }

  function answerInitialize(request) {
    const Database = require('better-sqlite3');
    db = new Database(indexPath, { readonly: true, fileMustExist: true });
    const collections = db
      .prepare(
        `SELECT c.name, c.root, (SELECT count(*) FROM documents d WHERE d.collection = c.name) AS documents
         FROM collections c ORDER BY c.name`,
      )
      .all();
    const contexts = db.prepare('SELECT collection, prefix, text FROM contexts ORDER BY collection, prefix').all();
    write({
      jsonrpc: '2.0',
      id: request.id,
      result: {
        protocolVersion: request.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'qmd-handshake-floor', version: '0.0.0' },
        instructions: instructions(collections, contexts),
      },
    });
    setImmediate(() => loadSdk().catch((error) => fail(error)));
  }

  async function loadSdk() {
    const [{ McpServer }, z] = await Promise.all([import('@modelcontextprotocol/server'), import('zod')]);
    const server = new McpServer({ name: 'qmd-handshake-floor', version: '0.0.0' });
    server.registerTool(
      'echo',
      { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) },
      async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    // A transport over this script's own stdin reader: the SDK's replies go to stdout, except
    // the one to the replayed `initialize`, which this script already gave.
    const self = {
      async start() {},
      async close() {
        self.onclose?.();
      },
      async send(message) {
        if (message.id === initialize.id && !('method' in message)) return;
        write(message);
      },
    };
    await server.connect(self);
    transport = self;
    transport.onmessage?.(initialize);
    const [cpu, ms] = [cpuMs(), performance.now()];
    process.stderr.write(`SDK_READY ${cpu} ${ms}\n`);
    for (const message of early.splice(0)) transport.onmessage?.(message);
    if (ended) leave();
  }

  function fail(error) {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exitCode = 1;
    leave();
  }

  function leave() {
    db?.close();
    db = undefined;
    transport?.onclose?.();
    transport = undefined;
  }

  function take(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (transport) transport.onmessage?.(message);
    else if (initialize === undefined && message.method === 'initialize') {
      initialize = message;
      answerInitialize(message);
    } else early.push(message);
  }

  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) take(line);
      newline = buffered.indexOf('\n');
    }
  });
  process.stdin.on('end', () => {
    ended = true;
    // Before the SDK is in, loadSdk leaves once it is (its import holds the event loop).
    if (transport || initialize === undefined) leave();
  });
}

// ---- the driver ----

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'handshake-floor', version: '0' } },
})}\n`;

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
};

async function measure(rounds) {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--measure ROUNDS');
  if (!process.env.QMD_INDEX) throw new Error('QMD_INDEX: the index to open');
  const preload = fileURLToPath(new URL('./first-reply-preload.mjs', import.meta.url));
  const self = fileURLToPath(import.meta.url);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const floorCache = mkdtempSync('/tmp/handshake-floor-cache-');
  const qmdCache = mkdtempSync('/tmp/handshake-floor-xdg-');

  // startup-cpu.mjs's once(), also reading SDK_READY from stderr (the child is awaited to its exit).
  const once = (args, env) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(process.execPath, ['--import', preload, ...args], {
        cwd: root,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      });
      let stderr = '';
      let wall;
      child.stdout.once('data', () => {
        wall = performance.now() - started;
        child.stdin.end();
      });
      child.stdout.resume();
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('exit', (code) => {
        const seen = /FIRST_REPLY ([\d.]+) ([\d.]+)/.exec(stderr);
        const sdk = /SDK_READY ([\d.]+) ([\d.]+)/.exec(stderr);
        if (wall === undefined || code !== 0) reject(new Error(`exit ${code}, reply ${wall}: ${stderr.slice(-800)}`));
        else
          resolve({
            cpu: seen ? Number(seen[1]) : Number.NaN,
            inProcess: seen ? Number(seen[2]) : Number.NaN,
            wall,
            sdkCpu: sdk ? Number(sdk[1]) : Number.NaN,
            sdkMs: sdk ? Number(sdk[2]) : Number.NaN,
          });
      });
      child.stdin.write(INITIALIZE);
    });

  const contenders = [
    { name: 'empty floor (bench/contenders/floor.mjs)', args: ['bench/contenders/floor.mjs'] },
    { name: 'bare SDK server', args: ['bench/contenders/sdk-server.mjs'] },
    { name: 'handshake floor (compile cache)', args: [self], env: { HANDSHAKE_FLOOR_CACHE: floorCache } },
    { name: 'handshake floor (no cache)', args: [self], env: { HANDSHAKE_FLOOR_CACHE: 'off' } },
    { name: '`qmd mcp`', args: ['dist/qmd.mjs', 'mcp'], env: { XDG_CACHE_HOME: qmdCache } },
  ].map((c) => ({ ...c, samples: [] }));
  try {
    for (let round = 0; round <= rounds; round++) {
      for (let i = 0; i < contenders.length; i++) {
        const c = contenders[(round + i) % contenders.length];
        const sample = await once(c.args, c.env);
        if (round > 0) c.samples.push(sample); // round 0 warms the page cache and the code caches
      }
    }
  } finally {
    rmSync(floorCache, { recursive: true, force: true });
    rmSync(qmdCache, { recursive: true, force: true });
  }
  const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
  const sdkCpu = median(contenders[1].samples.map((s) => s.cpu));
  console.log(`node ${process.version}, ${rounds} rounds, load ${(await import('node:os')).loadavg().join(' ')}\n`);
  console.log(
    '| contender | CPU to reply p50 (ms) | × bare SDK | in-process p50 (ms) | wall p50 (ms) | SDK ready: CPU p50 (ms) | SDK ready: ms since start p50 |',
  );
  console.log('|:---|---:|---:|---:|---:|---:|---:|');
  for (const c of contenders) {
    const pick = (k) => median(c.samples.map((s) => s[k]));
    console.log(
      `| ${c.name} | ${f(pick('cpu'))} | ${(pick('cpu') / sdkCpu).toFixed(2)} | ${f(pick('inProcess'))} | ${f(pick('wall'))} | ${f(pick('sdkCpu'))} | ${f(pick('sdkMs'))} |`,
    );
  }
}

if (process.argv[2] === '--measure') await measure(Number(process.argv[3]));
else serve();
