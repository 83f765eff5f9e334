// Preload for the start-up experiments (`node --import THIS server…`): at the server's first
// write to stdout (its `initialize` reply) it prints `FIRST_REPLY <cpu ms> <ms since start>` on
// stderr, where cpu is the process's user + system time so far, and at each of its first four
// writes `REPLY <n> <cpu ms> <ms since start>` (ready-cpu.mjs reads the second: `tools/list`). With STARTUP_PROFILE=FILE it
// also CPU-profiles the process from here to that write (100 µs sampling) into FILE.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const profileFile = process.env.STARTUP_PROFILE;
const session = profileFile ? new Session() : undefined;
if (session) {
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 100 });
  session.post('Profiler.start');
}
const write = process.stdout.write;
let writes = 0;
process.stdout.write = function firstReply(...args) {
  if (writes < 4) {
    writes += 1;
    const cpu = process.cpuUsage();
    const [ms, now] = [(cpu.user + cpu.system) / 1000, performance.now()];
    if (writes === 1) {
      process.stderr.write(`FIRST_REPLY ${ms} ${now}\n`);
      session?.post('Profiler.stop', (error, result) => {
        if (!error) writeFileSync(profileFile, JSON.stringify(result.profile));
        session.disconnect();
      });
    }
    process.stderr.write(`REPLY ${writes} ${ms} ${now}\n`);
  }
  return write.apply(this, args);
};
