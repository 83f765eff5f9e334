// What counting the files a scan passes by costs (issue 31): the listing qmd made before
// (`dot: false`, `node_modules` pruned) against the one it makes now (`dot: true`, every
// folder walked, then node_modules and hidden names counted and passed by in JS).
//   node bench/experiments/skip-count.mjs [ROOT] [ROUNDS]   (default: this repository, 5)
import { glob } from 'tinyglobby';

const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname;
const rounds = Number(process.argv[3] ?? 5);
const ways = {
  before: { dot: false, ignore: ['**/node_modules/**'] },
  now: { dot: true },
};
const times = { before: [], now: [] };
const found = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, options] of r % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
    const started = performance.now();
    const paths = await glob('**/*.md', { cwd: root, onlyFiles: true, followSymbolicLinks: false, ...options });
    times[name].push(performance.now() - started);
    found[name] = paths.length;
  }
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| listing of ${root} | .md files | median ms of ${rounds} |\n| --- | --- | --- |`);
for (const name of Object.keys(ways)) console.log(`| ${name} | ${found[name]} | ${median(times[name]).toFixed(0)} |`);
