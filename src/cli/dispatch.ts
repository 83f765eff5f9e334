import { fastPath } from './fast-path.js';

/**
 * Runs the command line: its fast path if it has one, else commander's program. Loaded by
 * `main.ts` after `boot()`, so that what it imports is source-mapped under --debug too.
 */
export async function dispatch(argv: string[]): Promise<void> {
  const fast = fastPath(argv);
  if (fast !== undefined) return fast();
  const { main } = await import('./program.js');
  return main(argv);
}
