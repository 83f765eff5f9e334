// Is a SIGINT that arrives while JS runs synchronous work heard, when the event loop then has
// nothing ref'd left? Node's signal watchers are unref'd: without a turn of the loop the
// pending signal is dropped and the process exits 0. Run:
//   for m in none immediate; do node bench/experiments/interrupt/pending-signal.mjs $m & p=$!; sleep 0.7; kill -INT $p; wait $p; done
const mode = process.argv[2];
let heard = false;
process.on('SIGINT', () => {
  heard = true;
  process.stderr.write('heard\n');
});
process.stderr.write('ready\n');
const end = Date.now() + 1500;
while (Date.now() < end) {}
if (mode === 'immediate') await new Promise((r) => setImmediate(r));
if (mode === 'timeout') await new Promise((r) => setTimeout(r, 0));
process.stderr.write(`after work: heard=${heard}\n`);
