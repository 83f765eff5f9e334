#!/usr/bin/env node
// The `qmd` binary, run directly by node: no launcher that re-spawns a child (a launcher that
// does not forward signals is how the peer orphans its server when the client sends SIGTERM).
//
// Bundled as `dist/qmd.mjs` (scripts/build.ts). Its static imports are only what must run
// before anything else loads: the first SIGINT listener (a Ctrl-C while the rest loads exits
// 130 with its line, src/sigint.ts), the Node version check (an unsupported Node gets one line
// and exit 1), the PPID read, then source maps under --debug and the compile cache, which
// apply only to modules loaded after them. Everything else is imported after `boot()`, each
// command's code on its first use.
import './first-sigint.js';
import './node-check.js';
import '../serve/startup.js';
import { errorMessage } from '../errors.js';
import { boot } from './boot.js';

boot(process.argv);
const { dispatch } = await import('./fast-path.js');

dispatch(process.argv).catch((error: unknown) => {
  process.stderr.write(`qmd: internal error: ${errorMessage(error)}\n`);
  process.exitCode = 70;
});
