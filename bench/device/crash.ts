/**
 * The crash rounds of the GPU check (bench/device/run.sh), on the product as shipped: `qmd mcp`
 * with the three models, a client that leaves the moment a call of one kind enters llama.cpp
 * (`QMD_DEBUG_EMBED`'s line, then 0–5 ms), by stdin EOF or SIGTERM; and `qmd embed` stopped
 * by one Ctrl-C (SIGINT) partway. The backend is the product's own choice (`QMD_GPU`, set by
 * the caller): no patched dist. One JSON line per round to OUT_JSONL, a markdown table to
 * OUT_JSONL with `-summary.md` for `.jsonl`.
 *
 *   node tools/crash.mjs QMD_MJS MODELS_DIR WORK_DIR OUT_JSONL
 *   env: CC_EOF=30 CC_TERM=10 CC_INT=10 CC_PARALLEL=4 CC_DEADLINE_S=240 CC_NOTES=120
 * Native crash: a SIGSEGV/SIGABRT/SIGBUS/SIGILL/SIGFPE/SIGTRAP, an exit 132–139, or an abort,
 * segfault, GGML_ASSERT or device-lost line on stderr.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [QMD, MODELS, WORK, OUT] = process.argv.slice(2) as [string, string, string, string];
if (OUT === undefined) {
  console.error('usage: crash QMD_MJS MODELS_DIR WORK_DIR OUT_JSONL');
  process.exit(2);
}
const knob = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const N_EOF = knob('CC_EOF', 30);
const N_TERM = knob('CC_TERM', 10);
const N_INT = knob('CC_INT', 10);
const PARALLEL = knob('CC_PARALLEL', 4);
const DEADLINE = performance.now() + knob('CC_DEADLINE_S', 240) * 1000;
const NOTES = knob('CC_NOTES', 120);
const HANG_MS = 60_000;
const NATIVE_SIGNALS = new Set(['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGTRAP']);
const NATIVE_TEXT =
  /Segmentation fault|Aborted|GGML_ASSERT[^\n]*|terminate called[^\n]*|double free[^\n]*|corrupted[^\n]*|ErrorDeviceLost[^\n]*|VK_ERROR_DEVICE_LOST[^\n]*/;
const log = (...args: unknown[]): void => console.log('[crash]', ...args);

const WORDS =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo'.split(
    ' ',
  );
const para = (i: number, bytes: number): string => {
  let s = '';
  for (let j = 0; s.length < bytes; j++)
    s += `${WORDS[(i * 13 + j * 7 + ((j * j + i) % 17)) % WORDS.length]}${j % 12 === 11 ? '.\n' : ' '}`;
  return s;
};
function corpus(dir: string, n: number): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++)
    writeFileSync(
      join(dir, `note-${i}.md`),
      `# Note ${i}\n\n${para(i, 1500)}\n\n## Part two\n\n${para(i + 1000, 1500)}\n`,
    );
}

rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });
const base: NodeJS.ProcessEnv = {
  ...process.env,
  XDG_CACHE_HOME: join(WORK, 'cache'),
  XDG_CONFIG_HOME: join(WORK, 'config'),
  QMD_EMBED_MODEL: join(MODELS, 'embed.gguf'),
  QMD_RERANK_MODEL: 'off',
  QMD_EXPAND_MODEL: 'off',
  QMD_DEBUG_EMBED: '1',
};
const qmd = (args: string[], env: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [QMD, ...args], { env, encoding: 'utf8', timeout: 600_000 });
const tail = (text: string, n = 4): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' | ')
    .slice(0, 600);

// The served index (20 notes, embedded) and a bare one (copied for each Ctrl-C round).
const served = join(WORK, 'served.sqlite');
const bare = join(WORK, 'bare.sqlite');
corpus(join(WORK, 'served-notes'), 20);
corpus(join(WORK, 'bare-notes'), NOTES);
for (const [index, notes] of [
  [served, 'served-notes'],
  [bare, 'bare-notes'],
] as const) {
  const run = qmd(['collection', 'add', join(WORK, notes), '--name', 'notes'], { ...base, QMD_INDEX: index });
  if (run.status !== 0) {
    log('collection add failed', run.status, run.signal, tail(run.stderr));
    process.exit(2);
  }
}
let started = performance.now();
const embedded = qmd(['embed'], { ...base, QMD_INDEX: served });
log(`served index: 20 notes embedded, exit ${embedded.status}, ${Math.round(performance.now() - started)} ms`);
if (embedded.status !== 0) {
  log(tail(embedded.stderr, 8));
  process.exit(2);
}
const full = join(WORK, 'full.sqlite');
const copyIndex = (from: string, to: string): void => {
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(to + suffix, { force: true });
    if (existsSync(from + suffix)) copyFileSync(from + suffix, to + suffix);
  }
};
copyIndex(bare, full);
started = performance.now();
const fullRun = qmd(['embed'], { ...base, QMD_INDEX: full });
const fullMs = performance.now() - started;
log(`a full qmd embed of ${NOTES} notes: exit ${fullRun.status}, ${Math.round(fullMs)} ms: ${tail(fullRun.stdout, 1)}`);

const LONG = para(5000, 1500).replace(/\n/g, ' ');
interface Kind {
  entering: string;
  closing: RegExp;
  env: NodeJS.ProcessEnv;
  args: Record<string, unknown>;
}
const KINDS: Record<string, Kind> = {
  expansion: {
    entering: 'QMD debug: generation call entering llama.cpp',
    closing: /closing: 1 generation call\(s\) running natively/,
    env: { QMD_EXPAND_MODEL: join(MODELS, 'generate.gguf') },
    args: { query: 'alpha bravo charlie' },
  },
  embedding: {
    entering: 'QMD debug: embedding call entering llama.cpp',
    closing: /closing: 1 embedding call\(s\) running natively/,
    env: {},
    args: { searches: [{ type: 'vec', query: LONG }] },
  },
  ranking: {
    entering: 'QMD debug: ranking call entering llama.cpp',
    closing: /closing: 1 ranking call\(s\) running natively/,
    env: { QMD_RERANK_MODEL: join(MODELS, 'rerank.gguf') },
    args: {
      searches: [
        { type: 'lex', query: 'alpha' },
        { type: 'vec', query: 'bravo charlie delta' },
      ],
    },
  },
};

interface Round {
  kind: string;
  trigger: string;
  k: number;
  code: number | null;
  signal: string | null;
  exitMs: number | null;
  triggerAtMs: number | null;
  delayMs: number;
  running: boolean;
  native: boolean;
  crashText: string;
  hung: boolean;
  noTrigger: boolean;
  stderrTail: string;
}

/** Starts `child`, fires `trigger` `delayMs` after `entering` shows on stderr, and reports how it ended. */
function watch(
  child: ChildProcess,
  meta: { kind: string; trigger: string; k: number; entering: string; closing: RegExp; delayMs: number },
  fire: () => void,
): Promise<Round> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let err = '';
    let firedAt: number | null = null;
    let triggerAt: number | null = null;
    let hung = false;
    let killer: NodeJS.Timeout | undefined;
    const trigger = (): void => {
      if (triggerAt !== null) return;
      triggerAt = performance.now() - t0;
      setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        firedAt = performance.now();
        fire();
        killer = setTimeout(() => {
          hung = true;
          child.kill('SIGKILL');
        }, HANG_MS);
      }, meta.delayMs);
    };
    const safety = setTimeout(() => trigger(), 180_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes(meta.entering)) trigger();
    });
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(safety);
      const crashText = NATIVE_TEXT.exec(err)?.[0] ?? '';
      const done = (): void =>
        resolve({
          kind: meta.kind,
          trigger: meta.trigger,
          k: meta.k,
          code,
          signal,
          exitMs: firedAt === null ? null : Math.round(performance.now() - firedAt),
          triggerAtMs: triggerAt === null ? null : Math.round(triggerAt),
          delayMs: meta.delayMs,
          running: meta.closing.test(err),
          native:
            (signal !== null && NATIVE_SIGNALS.has(signal)) ||
            (code !== null && code >= 132 && code <= 139) ||
            crashText !== '',
          crashText,
          hung,
          noTrigger: !err.includes(meta.entering),
          stderrTail: tail(err),
        });
      if (child.stderr?.readableEnded) done();
      else {
        child.stderr?.once('end', done);
        setTimeout(done, 2000);
      }
    });
  });
}

const line = (message: Record<string, unknown>): string => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;

function mcpRound(name: string, kind: Kind, trigger: 'EOF' | 'SIGTERM', k: number): Promise<Round> {
  const child = spawn(process.execPath, [QMD, 'mcp'], {
    env: { ...base, ...kind.env, QMD_INDEX: served, QMD_DRAIN_TIMEOUT_MS: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => {});
  let out = '';
  let called = false;
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (!called && out.includes('"id":1')) {
      called = true;
      child.stdin?.write(line({ method: 'notifications/initialized' }));
      child.stdin?.write(line({ id: 2, method: 'tools/call', params: { name: 'query', arguments: kind.args } }));
    }
  });
  child.stdin?.write(
    line({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gpu-check', version: '1' } },
    }),
  );
  const meta = {
    kind: name,
    trigger,
    k,
    entering: kind.entering,
    closing: kind.closing,
    delayMs: Math.floor(Math.random() * 6),
  };
  return watch(child, meta, () => (trigger === 'EOF' ? child.stdin?.end() : child.kill('SIGTERM')));
}

function embedRound(k: number): Promise<Round> {
  const index = join(WORK, `int-${k}.sqlite`);
  copyIndex(bare, index);
  const child = spawn(process.execPath, [QMD, 'embed'], {
    env: { ...base, QMD_INDEX: index },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Ctrl-C somewhere in the first 40% of a full run, after the first embedding call.
  const delayMs = Math.round(Math.random() * Math.max(20, 0.4 * fullMs));
  const meta = {
    kind: 'embed',
    trigger: 'SIGINT',
    k,
    entering: 'QMD debug: embedding call entering llama.cpp',
    closing: /closing: 1 embedding call\(s\) running natively/,
    delayMs,
  };
  return watch(child, meta, () => child.kill('SIGINT'));
}

writeFileSync(OUT, '');
const plan: Array<() => Promise<Round>> = [];
for (const [name, kind] of Object.entries(KINDS)) {
  for (let k = 0; k < N_EOF; k++) plan.push(() => mcpRound(name, kind, 'EOF', k));
  for (let k = 0; k < N_TERM; k++) plan.push(() => mcpRound(name, kind, 'SIGTERM', k));
}
for (let k = 0; k < N_INT; k++) plan.push(() => embedRound(k));

const results: Round[] = [];
let next = 0;
async function worker(): Promise<void> {
  while (next < plan.length) {
    const run = plan[next++] as () => Promise<Round>;
    if (performance.now() > DEADLINE) {
      log(`deadline: ${plan.length - next + 1} round(s) not run`);
      next = plan.length;
      return;
    }
    const r = await run();
    results.push(r);
    appendFileSync(OUT, `${JSON.stringify(r)}\n`);
    const how = r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
    log(
      `${`${r.kind} ${r.trigger}`.padEnd(18)} #${String(r.k).padStart(2)} ${how.padEnd(12)} ${r.exitMs ?? '-'} ms after` +
        `${r.running ? ', a call running at close' : ''}${r.native ? ` NATIVE CRASH ${r.crashText}` : ''}` +
        `${r.hung ? ' HUNG' : ''}${r.noTrigger ? ' (never entered)' : ''}${r.code || r.signal ? ` :: ${r.stderrTail}` : ''}`,
    );
  }
}
await Promise.all(Array.from({ length: PARALLEL }, () => worker()));

const median = (xs: number[]): number | string => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor(s.length / 2)] as number) : '-';
};
const rows = [
  '| call in flight | trigger | rounds | clean exit | other exits | signals | native crashes | hung | call running at close | exit after trigger, p50 / max ms |',
  '|---|---|---|---|---|---|---|---|---|---|',
];
let native = 0;
for (const [kind, trigger] of [
  ...Object.keys(KINDS).flatMap((k) => [
    [k, 'EOF'],
    [k, 'SIGTERM'],
  ]),
  ['embed', 'SIGINT'],
] as const) {
  const rs = results.filter((r) => r.kind === kind && r.trigger === trigger);
  if (rs.length === 0) continue;
  const clean = trigger === 'SIGINT' ? 130 : 0;
  const codes = new Map<string, number>();
  const signals = new Map<string, number>();
  for (const r of rs) {
    if (r.signal) signals.set(r.signal, (signals.get(r.signal) ?? 0) + 1);
    else if (r.code !== clean) codes.set(String(r.code), (codes.get(String(r.code)) ?? 0) + 1);
  }
  const count = (f: (r: Round) => boolean): number => rs.filter(f).length;
  native += count((r) => r.native);
  const list = (m: Map<string, number>): string => [...m].map(([k, n]) => `${n}× ${k}`).join(', ') || '-';
  const exits = rs.map((r) => r.exitMs).filter((x): x is number => x !== null);
  rows.push(
    `| ${kind === 'embed' ? 'qmd embed' : kind} | ${trigger} | ${rs.length} | ${count((r) => r.signal === null && r.code === clean)} (exit ${clean}) | ${list(codes)} | ${list(signals)} | **${count((r) => r.native)}** | ${count((r) => r.hung)} | ${count((r) => r.running)} | ${median(exits)} / ${Math.max(0, ...exits)} |`,
  );
}
const summary = [
  `Backend asked for: QMD_GPU=${process.env.QMD_GPU ?? 'auto'}. A full \`qmd embed\` of ${NOTES} notes: ${Math.round(fullMs)} ms (${tail(fullRun.stdout, 1)}).`,
  '',
  ...rows,
  '',
  `NATIVE CRASHES TOTAL: ${native} of ${results.length} rounds.`,
].join('\n');
writeFileSync(OUT.replace(/\.jsonl$/, '-summary.md'), `${summary}\n`);
console.log(`\n${summary}`);
