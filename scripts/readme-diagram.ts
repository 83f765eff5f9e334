/**
 * Puts the lifecycle machine's Mermaid export into README.md, between
 * `<!-- lifecycle-diagram:start -->` and `<!-- lifecycle-diagram:end -->`, and touches nothing
 * else. `test/viz/artifacts.test.ts` fails while the block is stale.
 *
 *   npx tsx scripts/readme-diagram.ts          # rewrite the block
 *   npx tsx scripts/readme-diagram.ts --check  # exit 1 if it is stale
 *
 * A missing README.md is created with just the markers and the block; a README.md without the
 * markers is an error (the markers say where the diagram belongs, and only a person decides that).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { lifecycleMachine } from '../machines/lifecycle.js';
import { betweenMarkers, README_END, README_START, readmeBlock, replaceBetweenMarkers } from '../src/viz/artifacts.js';
import { exportMachine } from '../src/viz/export.js';

const readme = new URL('../README.md', import.meta.url);
const block = readmeBlock(exportMachine(lifecycleMachine, 'mermaid'));

if (process.argv.includes('--check')) {
  const current = existsSync(readme) ? betweenMarkers(readFileSync(readme, 'utf8')) : null;
  if (current !== block) {
    process.stderr.write('README.md lifecycle diagram is stale or missing: run `npx tsx scripts/readme-diagram.ts`\n');
    process.exit(1);
  }
} else if (!existsSync(readme)) {
  writeFileSync(readme, `${README_START}${block}${README_END}\n`);
  process.stderr.write('created README.md with the lifecycle diagram\n');
} else {
  const text = readFileSync(readme, 'utf8');
  const next = replaceBetweenMarkers(text, block);
  if (next !== text) writeFileSync(readme, next);
  process.stderr.write(next === text ? 'README.md diagram already up to date\n' : 'updated README.md diagram\n');
}
