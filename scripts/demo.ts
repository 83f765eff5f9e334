/**
 * The main job, end to end (`npm run demo`): index this project's own markdown into a
 * temporary index, start `qmd mcp` as a child, talk to it with the SDK's real Client, then
 * close the client the way MCP clients do and show that the server shut down cleanly.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(
  root,
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: { qmd: string } }).bin.qmd,
);
const work = mkdtempSync(join(tmpdir(), 'qmd-demo-'));
const index = join(work, 'index.sqlite');
const env = { ...process.env, QMD_INDEX: index, QMD_LIFECYCLE_TRACE: join(work, 'trace.jsonl') };
const say = (text = '') => process.stdout.write(`${text}\n`);
const section = (title: string) => say(`\n━━ ${title}`);

function qmd(...args: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`qmd ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

try {
  section('1. Index this project’s markdown');
  say(`$ qmd collection add . --name project`);
  say(qmd('collection', 'add', root, '--name', 'project', '--mask', '{*.md,docs/**/*.md}'));
  say(qmd('status'));

  section('2. Start `qmd mcp` and talk to it with the MCP SDK client');
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env, stderr: 'pipe' });
  let serverStderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    serverStderr += d.toString();
  });
  const client = new Client({ name: 'qmd-demo', version: '1.0.0' });
  const t0 = performance.now();
  await client.connect(transport);
  const pid = transport.pid;
  say(
    `initialize answered in ${(performance.now() - t0).toFixed(0)} ms by ${JSON.stringify(client.getServerVersion())} (pid ${pid})`,
  );
  const tools = await client.listTools();
  say(`tools: ${tools.tools.map((t) => t.name).join(', ')}`);
  say(`instructions: ${client.getInstructions()?.split('\n')[0] ?? '(none)'}`);

  const query = 'server lifecycle shutdown';
  say(`\n> query { query: "${query}", limit: 3 }`);
  const result = await client.callTool({ name: 'query', arguments: { query, limit: 3 } });
  const text = (result.content as Array<{ type: string; text?: string }>).find((c) => c.type === 'text')?.text ?? '';
  say(text);
  const first = (result.structuredContent as { results?: Array<{ file: string }> } | undefined)?.results?.[0];
  if (first) {
    say(`\n> get { file: "${first.file}", maxLines: 8 }`);
    const doc = await client.callTool({ name: 'get', arguments: { file: first.file, maxLines: 8 } });
    say((doc.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n'));
  }

  section('3. Close the client (stdin EOF, as MCP clients do) and watch the server leave');
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const proc = (transport as unknown as { _process?: import('node:child_process').ChildProcess })._process;
    proc?.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const t1 = performance.now();
  await client.close();
  const exit = await exited;
  const ms = performance.now() - t1;
  for (const line of serverStderr.trim().split('\n')) say(`  server stderr │ ${line}`);
  say(
    `server exited with code ${exit.code}${exit.signal ? ` by ${exit.signal}` : ''} ${ms.toFixed(0)} ms after the client closed`,
  );
  const alive =
    pid !== null &&
    pid !== undefined &&
    (() => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    })();
  say(`process ${pid} still alive: ${alive ? 'YES (orphan!)' : 'no'}`);
  const wal = existsSync(`${index}-wal`);
  say(`index left with a -wal file: ${wal ? 'yes' : 'no'} (${readdirSync(work).join(', ')})`);

  section('4. The path it took (qmd lifecycle trace)');
  say(qmd('lifecycle', 'trace', env.QMD_LIFECYCLE_TRACE));
  if (exit.code !== 0 || alive || wal) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
