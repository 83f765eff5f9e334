/**
 * Facts read the moment the process starts, before any other module loads: by the time
 * `qmd mcp` has loaded its modules (hundreds of ms on a busy machine), a client that died in
 * the meantime has already reparented us, and a PPID read then would look unchanged.
 * `main.ts` imports this first.
 *
 * The code-cached `qmd mcp` script (code-cache.ts) has its own copy of this module, evaluated
 * later: each copy takes the value the first one stored under a global symbol.
 */
const FIRST_READ = Symbol.for('qmd.startup.ppid');
const store = globalThis as { [FIRST_READ]?: number };
store[FIRST_READ] ??= process.ppid;

export const STARTUP_PPID: number = store[FIRST_READ];
