import { createInflightGate } from '../../src/lifecycle/gate.js';

/**
 * A real gate whose traffic a test can await: `nextStart()` resolves when the next handler
 * enters it, `nextSettle()` when the next one leaves (call either before what causes it).
 */
export function probedGate() {
  const starts: Array<() => void> = [];
  const settles: Array<() => void> = [];
  const gate = createInflightGate({ onStarted: () => starts.shift()?.(), onSettled: () => settles.shift()?.() });
  return {
    gate,
    nextStart: () => new Promise<void>((resolve) => starts.push(resolve)),
    nextSettle: () => new Promise<void>((resolve) => settles.push(resolve)),
  };
}
