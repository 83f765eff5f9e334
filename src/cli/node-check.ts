import { nodeMismatch, nodeSupported } from './node-version.js';

/*
 * The first thing `qmd` runs (main.ts imports this first): on a Node it does not support, one
 * line on stderr and exit 1, before anything that needs a newer Node loads — `qmd mcp`
 * included, whose stdout stays empty. The bundle is built for Node 20's syntax
 * (scripts/build.ts `target`) so that an old Node gets this far.
 */
if (!nodeSupported(process.version)) {
  process.stderr.write(`${nodeMismatch(process.version)}\n`);
  process.exit(1);
}
