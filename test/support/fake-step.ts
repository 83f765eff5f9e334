import { type Deferred, deferred } from './deferred.js';
import type { FakeClock } from './fake-clock.js';

/**
 * How a fake teardown step behaves: settle on the test's say-so (`manual`), succeed, fail,
 * never settle; or, as an object, take `ms` of fake time (none if unset), then succeed or
 * reject with `reject`.
 */
export type StepMode = 'manual' | 'ok' | 'throw' | 'hang' | { ms?: number; reject?: unknown };

/** One run of the fake step `name`; a manual one hands its deferred to `hold`. */
export function fakeStep(
  name: string,
  mode: StepMode,
  clock: FakeClock,
  hold: (pending: Deferred<void>) => void,
): Promise<void> {
  switch (mode) {
    case 'ok':
      return Promise.resolve();
    case 'throw':
      return Promise.reject(new Error(`${name} exploded`));
    case 'hang':
      return new Promise<void>(() => {});
    case 'manual': {
      const d = deferred();
      hold(d);
      return d.promise;
    }
  }
  const settle = (): Promise<void> => (mode.reject === undefined ? Promise.resolve() : Promise.reject(mode.reject));
  if (mode.ms === undefined) return settle();
  return new Promise<void>((resolve) => clock.setTimeout(resolve, mode.ms!)).then(settle);
}
