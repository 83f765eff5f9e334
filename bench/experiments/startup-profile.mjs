// Experiment (not part of `npm run bench`): where a cold start's CPU goes before the
// `initialize` reply. Runs the server N times under a CPU profile cut at its first stdout
// write (first-reply-preload.mjs), sums self time by owner — a package under node_modules,
// a folder of ours (`qmd: store`…), node's own internals, V8's GC — and prints the medians.
// Inside a bundle, lines are attributed through esbuild's `// path` comments (unminified).
// The profiler itself adds some time; compare rows, and runs made the same way.
//
// Run: QMD_INDEX=… node bench/experiments/startup-profile.mjs RUNS LABEL NODE SCRIPT [ARGS…]
//   e.g. node bench/experiments/startup-profile.mjs 9 "qmd mcp" node dist/qmd.mjs mcp
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./first-reply-preload.mjs', import.meta.url));
const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-profile', version: '0' } },
})}\n`;

const ownersByFile = new Map();

/** Who owns line `line` of `url`: a package, a folder of ours, or node's internals. */
function ownerOf(url, line) {
  if (url.startsWith('node:')) return 'node internals (bootstrap, module loading)';
  if (!url.startsWith('file://')) return undefined;
  const path = fileURLToPath(url);
  const bundled = /\/dist\/(qmd\.mjs|chunks\/)/.test(path);
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(path);
  if (pkg && !bundled) return pkg[1];
  const ours = /\/dist\/(src|machines)\/([^/]+)/.exec(path);
  if (ours) return `qmd: ${ours[1] === 'machines' ? 'machines' : ours[2].replace(/\.js$/, '')}`;
  if (!ownersByFile.has(path)) {
    const owners = [];
    let current = 'bundle: top-level code of each chunk';
    for (const text of readFileSync(path, 'utf8').split('\n')) {
      const comment = /^\s*\/\/ (?:(?:\.\.\/)*node_modules\/((?:@[^/]+\/)?[^/]+)\/|(src|machines)\/([^/.]+))/.exec(
        text,
      );
      if (comment) current = comment[1] ?? `qmd: ${comment[2] === 'machines' ? 'machines' : comment[3]}`;
      owners.push(current);
    }
    ownersByFile.set(path, owners);
  }
  return ownersByFile.get(path)[line] ?? 'unknown';
}

function selfTimes(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const times = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = nodes.get(profile.samples[i]).callFrame;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    total += ms;
    const owner =
      (frame.url ? ownerOf(frame.url, frame.lineNumber) : undefined) ??
      (frame.functionName.startsWith('(') ? frame.functionName : 'native (V8 builtins, addons)');
    times.set(owner, (times.get(owner) ?? 0) + ms);
  }
  times.set('TOTAL sampled', total);
  return times;
}

const [runs, label, node, ...args] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'qmd-startup-profile-'));
try {
  const all = [];
  for (let i = 0; i < Number(runs); i++) {
    const file = join(dir, `${i}.cpuprofile`);
    spawnSync(node, ['--import', PRELOAD, ...args], {
      input: INITIALIZE,
      env: { ...process.env, STARTUP_PROFILE: file },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    all.push(selfTimes(JSON.parse(readFileSync(file, 'utf8'))));
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const rows = [...new Set(all.flatMap((t) => [...t.keys()]))]
    .map((owner) => [owner, median(all.map((t) => t.get(owner) ?? 0))])
    .sort((a, b) => b[1] - a[1]);
  console.log(`| ${label} (median of ${runs}) | self ms |\n|:---|---:|`);
  for (const [owner, ms] of rows) if (ms >= 0.3) console.log(`| ${owner} | ${ms.toFixed(1)} |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
