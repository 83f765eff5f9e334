// Does @lydell/node-pty report the exit before the last output has arrived? Each run: a child
// writes a final line and exits at once; we record whether that line was there at onExit, and
// whether it came later. `node bench/experiments/pty/exit-race.mjs [runs]`
import { spawn } from '@lydell/node-pty';

const runs = Number(process.argv[2] ?? 100);
let atExit = 0;
let later = 0;
let never = 0;
for (let i = 0; i < runs; i++) {
  await new Promise((resolve) => {
    const pty = spawn(
      process.execPath,
      ['-e', `process.stderr.write('x'.repeat(${i * 50}) + ' the end ${i}\\n'); process.exit(3)`],
      { cols: 80, rows: 24 },
    );
    let out = '';
    pty.onData((d) => {
      out += d;
    });
    pty.onExit(({ exitCode }) => {
      if (exitCode !== 3) throw new Error(`exit ${exitCode}`);
      if (out.includes(`the end ${i}`)) {
        atExit++;
        resolve();
        return;
      }
      const check = setInterval(() => {
        if (out.includes(`the end ${i}`)) {
          later++;
          clearInterval(check);
          clearTimeout(give);
          resolve();
        }
      }, 5);
      const give = setTimeout(() => {
        never++;
        clearInterval(check);
        resolve();
      }, 2000);
    });
  });
}
console.log(JSON.stringify({ node: process.version, runs, atExit, later, never }));
