// The child of probe.mjs: prints whether stderr is a terminal and its width, then waits for SIGINT
// ("exit": exits 130 from its handler; "die": killed by it).
const mode = process.argv[2];
const t = setInterval(() => {}, 1000);
if (mode === 'exit')
  process.on('SIGINT', () => {
    process.stderr.write('got SIGINT\n');
    process.exitCode = 130;
    clearInterval(t);
  });
process.stderr.write(`ready isTTY=${process.stderr.isTTY} cols=${process.stderr.columns}\n`);
