import { installFirstSigint } from '../sigint.js';

// main.ts imports this first: a Ctrl-C while the program loads exits 130 with its line
// (src/sigint.ts). `QMD_TEST_SIGINT_READY=1` (tests only) says on stderr when it is in place.
installFirstSigint({ announce: process.env.QMD_TEST_SIGINT_READY === '1' });
