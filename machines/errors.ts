/**
 * The message of a step's error, as the machines record it. The machines import only `xstate`
 * and each other, so this is their copy of `src/errors.ts`'s `errorMessage`, with the same rule.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
