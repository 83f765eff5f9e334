import type { FakeClock } from './fake-clock.js';
import { recordingLog } from './recording-log.js';

/**
 * What a host's fake records of the process, the same for both harnesses: every call in order
 * (`calls`) with its time on the fake clock (`callTimes`), the log (each line also a `log:` or
 * `warn:` call), the exit code slot (`exitCode=N`) and `process.exit` (`exit(N)`).
 */
export function recordProcess(clock: FakeClock, priorExitCode?: unknown) {
  const calls: string[] = [];
  const callTimes: number[] = [];
  const exits: number[] = [];
  let exitCode = priorExitCode;
  const record = (call: string): void => {
    calls.push(call);
    callTimes.push(clock.now());
  };
  return {
    calls,
    callTimes,
    exits,
    record,
    log: recordingLog((kind, text) => record(`${kind === 'warn' ? 'warn' : 'log'}:${text}`)),
    /** For the host's options. */
    exitCode: {
      get: () => exitCode,
      set: (code: number) => {
        exitCode = code;
        record(`exitCode=${code}`);
      },
    },
    exit: (code: number): void => {
      exits.push(code);
      record(`exit(${code})`);
    },
    /** The slot as the test sees (and sets) it. */
    get current(): unknown {
      return exitCode;
    },
    set current(value: unknown) {
      exitCode = value;
    },
  };
}
