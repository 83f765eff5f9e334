/**
 * Experiment (not part of `npm run bench`): what an `inspect` callback costs the lifecycle
 * actor per `handler.started` + `handler.settled` pair (see bench/experiments/actor-send.ts).
 *   npx tsx bench/experiments/actor-inspect.ts [pairs]
 * Contenders: the actor with and without an `inspect` callback, and a plain counter.
 * Prints µs per pair (median of 15 rounds). Measured 5.2 vs 13.6 µs: the host passes
 * `inspect` only when a trace or an inspector is attached.
 */
import { performance } from 'node:perf_hooks';
import { createActor } from 'xstate';
import { lifecycleMachine } from '../../machines/lifecycle.js';

const pairs = Number(process.argv[2] ?? 20000);

function measure(name: string, setupFn: () => (n: number) => void): void {
  const rounds: number[] = [];
  for (let r = 0; r < 15; r++) {
    const run = setupFn();
    const t = performance.now();
    run(pairs);
    rounds.push(((performance.now() - t) * 1000) / pairs);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(40)} ${rounds[7]!.toFixed(2)} µs/pair`);
}

const actorWith = (inspect?: () => void) => () => {
  const actor = createActor(lifecycleMachine, { input: {}, ...(inspect && { inspect }) });
  actor.start();
  return (n: number) => {
    for (let i = 0; i < n; i++) {
      actor.send({ type: 'handler.started' });
      actor.send({ type: 'handler.settled' });
    }
  };
};

measure('actor, no inspect', actorWith());
measure(
  'actor, inspect () => {}',
  actorWith(() => {}),
);
measure('actor, no inspect (again)', actorWith());
measure('plain counter', () => {
  let c = 0;
  return (n) => {
    for (let i = 0; i < n; i++) {
      c++;
      c--;
    }
    if (c !== 0) throw new Error();
  };
});
