import { packageVersion } from '../../cli/version.js';
import type { Lifecycle } from '../../lifecycle/host.js';
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
): NonNullable<HttpServeOptions['claim']> {
  const self = selfRecord();
  let closeControl: (() => void) | undefined;
  return {
    async onListening(url, port, lifecycle: Lifecycle) {
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
      const claim = await claimPidfile(pidfile, record);
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
