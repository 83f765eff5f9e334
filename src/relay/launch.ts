import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { openPrivateFile } from '../private-file.js';

/**
 * How a relay starts the shared server so that the server belongs to no client: not in the
 * relay's process tree, process group or session. A client may end every descendant it can
 * find by walking parent PIDs (opencode does, when `opencode mcp list` exits), and a terminal
 * or a supervisor may signal a client's whole process group; the server serves every client,
 * so neither may reach it.
 *
 * A launcher does it: started detached (its own session and group), it starts the server in
 * the background and exits at once, so the server is reparented away from the relay (to init,
 * or to the nearest subreaper: a client that makes itself one gets it back, and only that).
 * On POSIX the launcher is `/bin/sh` (about 10 ms; a `node -e` launcher took 300–400 ms of a
 * loaded 2-core machine before the server could even start). Windows has no `sh`: there a
 * second node starts the server detached and leaves (not run on Windows yet).
 */
export interface LaunchCommand {
  command: string;
  args: string[];
}

/** `sh -c '"$@" &'`: the command runs in the background, sh exits without waiting for it. */
const POSIX_LAUNCHER = '"$@" &';
const NODE_LAUNCHER =
  "require('node:child_process').spawn(process.argv[1],process.argv.slice(2),{detached:true,stdio:'inherit',windowsHide:true}).unref()";

export function launchCommand(platform: NodeJS.Platform, execPath: string, args: readonly string[]): LaunchCommand {
  if (platform === 'win32') return { command: execPath, args: ['-e', NODE_LAUNCHER, execPath, ...args] };
  return { command: '/bin/sh', args: ['-c', POSIX_LAUNCHER, 'qmd-launcher', execPath, ...args] };
}

/**
 * Starts `execPath args` through the launcher with no terminal, stdin closed and stdout and
 * stderr appended to `logPath` (created 0600). Returns at once; `onError` hears a launcher
 * that could not be started at all.
 */
export function launchDetached(options: {
  execPath: string;
  args: readonly string[];
  logPath: string;
  env: NodeJS.ProcessEnv;
  onError: (error: Error) => void;
  platform?: NodeJS.Platform;
}): void {
  const { command, args } = launchCommand(options.platform ?? process.platform, options.execPath, options.args);
  let out: number;
  try {
    out = openPrivateFile(options.logPath, 'append');
  } catch (error) {
    options.onError(error as Error);
    return;
  }
  try {
    const launcher = spawn(command, args, {
      detached: true,
      stdio: ['ignore', out, out],
      env: options.env,
      windowsHide: true,
    });
    launcher.once('error', options.onError);
    launcher.unref();
  } finally {
    closeSync(out);
  }
}
