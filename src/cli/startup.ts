/**
 * Facts read the moment the process starts, before any other module loads: by the time
 * `qmd mcp` has loaded its modules (hundreds of ms on a busy machine), a client that died in
 * the meantime has already reparented us, and a PPID read then would look unchanged.
 * `main.ts` imports this first.
 */
export const STARTUP_PPID = process.ppid;
