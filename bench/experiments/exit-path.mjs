// Experiment (not part of `npm run bench`): what leaving a node process costs, by what it has
// loaded and by how it leaves. A child loads nothing, the MCP SDK, qmd's modules (SDK, zod,
// xstate, node:sqlite with a database open; better-sqlite3 before the move to node:sqlite) or a warm node-llama-cpp model (the tiny test
// model, disposed on EOF as qmd does), then on stdin EOF either lets the event loop drain
// (what qmd does after `done`) or calls process.exit(0). Timed in the parent from end() to
// the exit event, interleaved. It explains the "then exit" column of the exit benchmark.
//
// Run: node bench/experiments/exit-path.mjs [ROUNDS=10]   (the model needs one `npm run bench` first)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MODEL = fileURLToPath(new URL('../.tmp/tiny-embed.gguf', import.meta.url));
const [role, load, mode] = process.argv.slice(2);

async function child() {
  let dispose = async () => {};
  if (load === 'sdk' || load === 'qmd') {
    await import('@modelcontextprotocol/sdk/server/mcp.js');
    await import('@modelcontextprotocol/sdk/server/stdio.js');
    await import('zod');
  }
  if (load === 'qmd') {
    await import('xstate');
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(':memory:');
    db.exec('create table t(x); insert into t values (1)');
    dispose = async () => db.close();
  }
  if (load === 'llama') {
    const { getLlama } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 2, logger: () => {} });
    const model = await llama.loadModel({ modelPath: MODEL });
    const context = await model.createEmbeddingContext({ threads: 2, contextSize: 512 });
    await context.getEmbeddingFor('hello world');
    dispose = async () => {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    };
  }
  process.stdin.on('data', () => process.stdout.write('ready\n'));
  process.stdin.on('end', async () => {
    await dispose();
    if (mode === 'exit') process.exit(0);
  });
}

async function parent(rounds) {
  const loads = ['none', 'sdk', 'qmd', ...(existsSync(MODEL) ? ['llama'] : [])];
  const combos = loads.flatMap((l) => [`${l}/drain`, `${l}/exit`]);
  const samples = new Map(combos.map((c) => [c, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < combos.length; i++) {
      const combo = combos[(round + i) % combos.length];
      const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', ...combo.split('/')], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      proc.stdin.write('go\n');
      await new Promise((resolve) => proc.stdout.once('data', resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      proc.stdin.end();
      await new Promise((resolve) => proc.on('exit', resolve));
      samples.get(combo).push(performance.now() - started);
    }
  }
  console.log('loaded / leaves by   EOF → exit p50 (ms)');
  for (const [combo, values] of samples) {
    values.sort((a, b) => a - b);
    console.log(`${combo.padEnd(20)} ${values[Math.floor(values.length / 2)].toFixed(1).padStart(8)}`);
  }
  if (!existsSync(MODEL)) console.log('(no tiny model in bench/.tmp yet: run npm run bench once for the llama rows)');
}

if (role === 'child') await child();
else await parent(Number(role ?? 10));
