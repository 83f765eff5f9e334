import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { definedStates, definedTransitions, describePath, type transitionRecorder } from './model.js';
import { replay } from './replay.js';

type Path = { steps: Array<{ event: EventObject; state: AnyMachineSnapshot }> };

/** Paths grouped by their first trigger, so a test reports a group and a failure names its path. */
export function groupByTrigger<P extends Path>(paths: P[]): Array<[string, P[]]> {
  const groups = new Map<string, P[]>();
  for (const p of paths) {
    const first = p.steps.find(
      (s) => !s.event.type.startsWith('handler.') && (s.event.type as string) !== 'xstate.init',
    );
    const key = first ? describePath([{ event: { type: '' } }, first]) : '(no trigger)';
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

type Observer = Parameters<typeof replay>[1];

/**
 * Replays every path (with ./replay.ts's `replay`, or `run`); collects failures with the path
 * that failed rather than stopping at one.
 */
export async function replayAll<P extends Path>(
  paths: P[],
  observe?: Observer,
  run: (steps: P['steps'], observe?: Observer) => Promise<void> = replay as never,
): Promise<string[]> {
  const failures: string[] = [];
  for (const path of paths) {
    try {
      await run(path.steps, observe);
    } catch (error) {
      failures.push(`${describePath(path.steps)}\n  ${(error as Error).message.split('\n').slice(0, 6).join('\n  ')}`);
    }
  }
  return failures;
}

/**
 * Throws unless `failures` is empty, with one line per broken guarantee (how many paths broke
 * it, and the first one's message), so a broken machine reads as the promises it breaks.
 * A failure the oracle did not name (the host disagreeing with the machine) is grouped too.
 */
export function expectNone(failures: string[], total: number): void {
  if (failures.length === 0) return;
  const byGuarantee = new Map<string, string[]>();
  for (const f of failures) {
    const name = /guarantee "([^"]+)" broken/.exec(f)?.[1] ?? 'the host does what the machine says';
    byGuarantee.set(name, [...(byGuarantee.get(name) ?? []), f]);
  }
  const lines = [...byGuarantee].map(([name, list]) => `- "${name}" ×${list.length}, first: ${list[0]}`);
  throw new Error(`${failures.length} of ${total} paths failed; broken:\n${lines.join('\n')}`);
}

/** Fails unless the replays took every state and every transition the machine defines. */
export function expectFullCoverage(
  recorder: Pick<ReturnType<typeof transitionRecorder>, 'taken' | 'states'>,
  expectFn: (value: unknown) => { toEqual(expected: unknown): void },
  label: string,
  machine?: AnyStateMachine,
): void {
  const states = definedStates(machine);
  const transitions = definedTransitions(machine);
  const missedStates = states.filter((s) => !recorder.states.has(s));
  const missedTransitions = transitions.filter((t) => !recorder.taken.has(t));
  console.error(
    `${label} coverage: states ${states.length - missedStates.length}/${states.length}, ` +
      `transitions ${transitions.length - missedTransitions.length}/${transitions.length}`,
  );
  expectFn(missedStates).toEqual([]);
  expectFn(missedTransitions).toEqual([]);
}

/** The paths that are not a strict prefix of another path. */
export function withoutPrefixes<P extends Path>(paths: P[]): P[] {
  const key = (p: Path) => p.steps.map((s) => JSON.stringify(s.event)).join('\u0000');
  const keys = paths.map(key);
  const prefixes = new Set<string>();
  for (const k of keys) {
    let i = k.indexOf('\u0000');
    while (i !== -1) {
      prefixes.add(k.slice(0, i));
      i = k.indexOf('\u0000', i + 1);
    }
  }
  return paths.filter((_, i) => !prefixes.has(keys[i]!));
}
