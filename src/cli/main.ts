#!/usr/bin/env node
// The `qmd` binary, run directly by node: no launcher that re-spawns a child (a launcher that
// does not forward signals is how the peer orphans its server when the client sends SIGTERM).
import './startup.js';
import { errorMessage } from '../errors.js';
import { main } from './program.js';

main(process.argv).catch((error: unknown) => {
  process.stderr.write(`qmd: internal error: ${errorMessage(error)}\n`);
  process.exitCode = 70;
});
