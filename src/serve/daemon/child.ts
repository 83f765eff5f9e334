import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { packageVersion } from '../../cli/version.js';
import type { Lifecycle } from '../../lifecycle/host.js';
import type { Log } from '../../log.js';
import { listenControl } from '../control/listen.js';
import type { HttpServeOptions } from '../http.js';
import { claimPidfile, markListening, type PidRecord, releasePidfile, selfRecord } from './pidfile.js';

/**
 * The server side of the index's one HTTP claim, for the daemon (`detached`) and a foreground
 * `qmd mcp --http` alike: once listening (the port is known, even with `--port 0`), claim the
 * pidfile and open the control socket (`control`, derived from the index) that `qmd status`,
 * `qmd mcp stop` and a starting daemon's parent talk to; when teardown is done, close it and
 * remove the pidfile if it is still ours. The parent waits for the control socket to answer
 * with this pid.
 */
export function claimHooks(
  pidfile: string,
  control: string,
  indexPath: string,
  host: string,
  detached: boolean,
  log: Log,
): NonNullable<HttpServeOptions['claim']> {
  const self = selfRecord();
  let closeControl: (() => void) | undefined;
  return {
    async onListening(url, port, lifecycle: Lifecycle, watch) {
      const record: PidRecord = {
        ...self,
        host,
        port,
        url,
        index: indexPath,
        version: packageVersion(),
        startedAt: new Date().toISOString(),
        control,
      };
      let claim: Awaited<ReturnType<typeof claimPidfile>>;
      try {
        // With no index yet, the default folder may not exist (the token file made it, unless --no-auth).
        mkdirSync(dirname(pidfile), { recursive: true, mode: 0o700 });
        claim = await claimPidfile(pidfile, record);
      } catch (error) {
        // An index in a folder this user cannot write (served read-only): a foreground server
        // still serves, unclaimed; the daemon's parent needs the claim to find its child.
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (detached || !['EACCES', 'EPERM', 'EROFS', 'ENOENT'].includes(code)) throw error;
        log.warn(
          `cannot write ${pidfile} (${code}): serving without the index's claim, so qmd status and qmd mcp stop will not see this server (stop it with a signal)`,
        );
        return;
      }
      if (!claim.claimed)
        throw new Error(
          `another qmd mcp --http (pid ${claim.holder.pid}, ${claim.holder.url}) already serves ${indexPath}; use it, or stop it with qmd mcp stop`,
        );
      const started = performance.now();
      closeControl = await listenControl(control, {
        index: indexPath,
        status: () => ({
          kind: detached ? 'daemon' : 'http',
          pid: process.pid,
          index: indexPath,
          version: record.version,
          startedAt: record.startedAt,
          uptimeMs: Math.round(performance.now() - started),
          state: lifecycle.state(),
          url,
          watch: watch(),
        }),
        stop: () => void lifecycle.shutdown('qmd mcp stop'),
      });
      markListening(pidfile, record);
    },
    onDone() {
      closeControl?.();
      releasePidfile(pidfile, self.instance);
    },
  };
}
