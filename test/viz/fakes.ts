import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { InspectionEvent } from 'xstate';
import { type Lifecycle, startLifecycle } from '../../src/lifecycle/host.js';
import type { Log } from '../../src/log.js';
import { FakeClock } from '../support/fake-clock.js';

export type StepBehaviour = { ms: number; fail?: string };

export interface FakeLifecycle {
  lifecycle: Lifecycle;
  clock: FakeClock;
  /** Ends stdin the way a departing client does: EOF, read to the end. */
  endStdin(): void;
}

/**
 * The real host (`startLifecycle`) with hand-written fakes: PassThrough stdin/stdout, an
 * EventEmitter for signals, no parent watch, a fake clock, and an exit code and `exit` that
 * touch nothing. Each teardown step settles after `ms` of fake time, or fails with `fail`.
 */
export function fakeLifecycle(options: {
  log: Log;
  closeTransport?: StepBehaviour;
  disposeStore?: StepBehaviour;
  traceFile?: string;
  inspect?: Array<(event: InspectionEvent) => void>;
}): FakeLifecycle {
  const clock = new FakeClock();
  const stdin = new PassThrough();
  let exitCode: number | undefined;
  const step =
    (behaviour: StepBehaviour = { ms: 0 }) =>
    () =>
      new Promise<void>((resolve, reject) => {
        clock.setTimeout(() => (behaviour.fail ? reject(new Error(behaviour.fail)) : resolve()), behaviour.ms);
      });
  const lifecycle = startLifecycle({
    closeTransport: step(options.closeTransport),
    disposeStore: step(options.disposeStore),
    stdin,
    stdout: new PassThrough(),
    log: options.log,
    signals: new EventEmitter(),
    parent: null,
    clock,
    exitCode: {
      get: () => exitCode,
      set: (code) => {
        exitCode = code;
      },
    },
    exit: () => {},
    activeResources: () => [],
    ...(options.traceFile !== undefined && { traceFile: options.traceFile }),
    ...(options.inspect !== undefined && { inspect: options.inspect }),
  });
  return {
    lifecycle,
    clock,
    endStdin: () => {
      stdin.end();
      stdin.resume();
    },
  };
}
