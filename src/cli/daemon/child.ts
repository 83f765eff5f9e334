import type { HttpServeOptions } from '../mcp/http.js';
import { packageVersion } from '../version.js';
import { claimPidfile, type PidRecord, releasePidfile } from './pidfile.js';
import { readIdentity } from './proc.js';

/**
 * The daemon side of the pidfile: once listening (the port is known, even with `--port 0`),
 * claim the pidfile with this process's identity; when teardown is done, remove it if it is
 * still ours. The parent waits for this record to appear before it answers.
 */
export function daemonHooks(pidfile: string, indexPath: string, host: string): NonNullable<HttpServeOptions['daemon']> {
  const self = readIdentity(process.pid);
  return {
    onListening(url, port) {
      if (self === null)
        throw new Error('cannot read this process in /proc; refusing to write an unverifiable pidfile');
      const record: PidRecord = {
        ...self,
        host,
        port,
        url,
        index: indexPath,
        version: packageVersion(),
        startedAt: new Date().toISOString(),
      };
      const claim = claimPidfile(pidfile, record);
      if (!claim.claimed)
        throw new Error(`another daemon (pid ${claim.holder.pid}, ${claim.holder.url}) already serves this index`);
    },
    onDone() {
      if (self !== null) releasePidfile(pidfile, self.pid, self.startTicks);
    },
  };
}
