/**
 * Renders `docs/lifecycle.svg` from the lifecycle machine's DOT export, offline: Graphviz
 * compiled to WebAssembly (`@hpcc-js/wasm-graphviz`), no system Graphviz. The SVG carries the
 * DOT's hash (`<!-- dot-sha256: … -->`) so `test/viz/artifacts.test.ts` knows when it is stale.
 *
 *   npx tsx scripts/render-diagram.ts          # rewrite docs/lifecycle.svg
 *   npx tsx scripts/render-diagram.ts --check  # exit 1 if it is stale
 *
 * Measured with 1.29.2: two renders of the same DOT are byte-identical (no timestamps); text
 * widths come from Graphviz's built-in font metrics, so the layout does not depend on the
 * fonts installed here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import { lifecycleMachine } from '../machines/lifecycle.js';
import { dotHash, stampSvg, svgDotHash } from '../src/viz/artifacts.js';
import { exportMachine } from '../src/viz/export.js';

const target = new URL('../docs/lifecycle.svg', import.meta.url);
const dot = exportMachine(lifecycleMachine, 'dot');

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // Missing counts as stale.
  }
  if (svgDotHash(current) !== dotHash(dot)) {
    process.stderr.write('docs/lifecycle.svg is stale: run `npx tsx scripts/render-diagram.ts`\n');
    process.exit(1);
  }
} else {
  const graphviz = await Graphviz.load();
  writeFileSync(target, stampSvg(graphviz.dot(dot), dot));
  process.stderr.write('wrote docs/lifecycle.svg\n');
}
