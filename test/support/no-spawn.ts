import { createRequire, syncBuiltinESMExports } from 'node:module';

const childProcess = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');

/**
 * `npm run test:fast`'s setup file (vitest.fast.config.ts): every way to start a process throws,
 * so a test that spawns one fails there instead of slowing the fast run. Such a test belongs in
 * the config's `exclude` list. `syncBuiltinESMExports` carries the change to named ESM imports.
 */
const ways = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const way of ways) {
  Object.assign(childProcess, {
    [way]: () => {
      throw new Error(`test:fast runs no process (child_process.${way}): exclude this file in vitest.fast.config.ts`);
    },
  });
}
syncBuiltinESMExports();
