/**
 * The Node flags qmd hands on to what it starts itself: the query worker (a thread) and the
 * shared server and HTTP daemon (processes). `process.execArgv` holds the flags of whatever
 * started this process, a wrapper's included: the MCP SDK's own stdio scenario runs
 * `node --input-type=module -e "…await import(qmd)"`, and a client may add preloads
 * (`--require`, `--import`) or V8 flags. Measured on Node 22.23 and 24.22
 * (docs/design.md §8.4): a worker inherits `process.execArgv` by default, and `--input-type`
 * then makes it fail at start (ERR_INPUT_TYPE_NOT_ALLOWED); V8 and process flags
 * (`--max-old-space-size`, `--stack-size`, `--expose-gc`, `--title`) given to a worker
 * explicitly are refused at once (ERR_WORKER_INVALID_EXEC_ARGV); `-e` and preloads are taken
 * and run again.
 *
 * A neutral leaf: it imports nothing.
 */

/** Flags that only change how errors and warnings are reported: what a worker may take. */
const REPORTING_FLAGS: ReadonlySet<string> = new Set([
  '--enable-source-maps',
  '--no-warnings',
  '--no-deprecation',
  '--trace-warnings',
  '--trace-deprecation',
  '--trace-uncaught',
  '--throw-deprecation',
]);

/**
 * The flags for the query worker: only the reporting ones (an allowlist, since an unknown flag
 * can make Node refuse the worker). V8 flags apply to every thread of the process anyway;
 * everything else was meant for the wrapper's own program.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  return execArgv.filter((flag) => REPORTING_FLAGS.has(flag) || /^--unhandled-rejections=[a-z-]+$/.test(flag));
}

/**
 * Flags that make node run something other than the script it is given, or run a wrapper's
 * code before it, or stop for a debugger: never handed to a server qmd starts for every client.
 * Each takes a value (the next argument, unless written `--flag=value`) when listed with `true`.
 */
const NOT_FOR_CHILDREN: ReadonlyMap<string, boolean> = new Map([
  ['-e', true],
  ['--eval', true],
  ['-p', true],
  ['--print', true],
  ['-pe', true],
  ['-ep', true],
  ['--input-type', true],
  ['-r', true],
  ['--require', true],
  ['--import', true],
  ['--loader', true],
  ['--experimental-loader', true],
  ['-i', false],
  ['--interactive', false],
  ['-c', false],
  ['--check', false],
  ['--test', false],
  ['--watch', false],
  ['--watch-path', true],
  ['--watch-preserve-output', false],
  ['--inspect', false],
  ['--inspect-brk', false],
  ['--inspect-wait', false],
  ['--inspect-port', true],
  ['--debug-port', true],
]);

/**
 * The flags for a process qmd starts from its own script (the shared server, the HTTP
 * daemon): this process's, without a wrapper's program (`-e`, `-p`, `--input-type`), its
 * preloads (the shared server belongs to no client, so no client's instrumentation), its
 * test, watch and debugger modes. Everything else (V8 flags like `--max-old-space-size`,
 * `--enable-source-maps`, …) is kept: the person who set it meant it for qmd too.
 */
export function childExecArgv(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const name = flag.startsWith('--') && flag.includes('=') ? flag.slice(0, flag.indexOf('=')) : flag;
    const takesValue = NOT_FOR_CHILDREN.get(name);
    if (takesValue === undefined && !/^--(test|inspect)-/.test(name)) {
      kept.push(flag);
      continue;
    }
    if (takesValue === true && name === flag) i++;
  }
  return kept;
}
