import { lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:net';
import type { Log } from '../log.js';
import { type HostFacts, usesNamedPipes } from '../platform.js';
import { retiringRecordPath, retiringSocketPath, type SharedPaths } from '../relay/paths.js';
import { listenControl } from './control/listen.js';
import type { ControlHandlers } from './control/server.js';
import { type PidRecord, releasePidfile, writeRecord } from './daemon/pidfile.js';

/**
 * The shared server's hold on its place (docs/design.md §2.2): the socket path relays connect
 * to and the record that claims the index. It can lose either while it runs, and then it
 * retires (takes no new session, answers `qmd status` and `qmd mcp stop` on a control socket
 * of its own, `mcp-<hash>-retiring-<pid>.sock`, and leaves when its last session ends):
 * - a relay of a newer qmd asks it to (`retire`);
 * - another server took the path (the inode changed): this one had stopped answering (a
 *   SIGSTOP, a machine asleep) and a relay started a successor, which judged it gone;
 * A path that vanished (a cleaner of `/tmp`: systemd-tmpfiles, macOS's periodic) is bound
 * again, as tmux re-creates its socket.
 *
 * It never removes a socket file that is not the one it bound (compared by inode), nor a record
 * that is not its own run's: both may be a successor's.
 */
export interface SharedPlace {
  /** Bound the path (called once listening): remember what is ours. */
  bound(): void;
  /** Whether the path still holds the socket this server bound. */
  holdsPath(): boolean;
  /**
   * Gives the path and the record up (if still ours) and answers control requests on the
   * retiring socket instead. Idempotent; never rejects.
   */
  retire(listener: Server, why: string): Promise<void>;
  /** Teardown done: remove what is still ours (the path, the record, the retiring socket). */
  leave(): void;
  /** Checks the path every `everyMs`; `onLost` hears a path another server took, `onVanished` one that is gone. */
  watch(everyMs: number, onLost: () => void, onVanished: () => void): void;
  readonly retiring: boolean;
}

export function sharedPlace(options: {
  paths: SharedPaths;
  facts: HostFacts;
  record: PidRecord;
  handlers: ControlHandlers;
  log: Log;
}): SharedPlace {
  const { paths, facts, record, log } = options;
  const pipe = usesNamedPipes(facts.platform);
  let inode: number | bigint | undefined;
  let retiring = false;
  let closeRetiring: (() => void) | undefined;
  const retiringRecord = retiringRecordPath(paths, record.pid, facts);
  let timer: NodeJS.Timeout | undefined;

  const inodeNow = (): number | bigint | undefined => {
    try {
      return lstatSync(paths.socket).ino;
    } catch {
      return undefined;
    }
  };
  const holdsPath = (): boolean => pipe || (inode !== undefined && inodeNow() === inode);
  const removeOwnSocket = (): void => {
    if (pipe || !holdsPath()) return;
    try {
      unlinkSync(paths.socket);
    } catch {
      // Gone already.
    }
  };

  return {
    get retiring() {
      return retiring;
    },
    bound() {
      inode = pipe ? undefined : inodeNow();
    },
    holdsPath,
    async retire(listener, why) {
      if (retiring) return;
      retiring = true;
      if (timer !== undefined) clearInterval(timer);
      listener.close();
      removeOwnSocket();
      releasePidfile(paths.record, record.instance);
      const control = retiringSocketPath(paths, record.pid, facts);
      try {
        closeRetiring = await listenControl(control, options.handlers);
        writeRecord(retiringRecord, { ...record, control, retiring: why });
      } catch (error) {
        // Unreachable then for `qmd status` and `stop`; it still leaves with its last client.
        log.warn(`cannot answer on ${control} while retiring: ${(error as Error).message}`);
      }
    },
    leave() {
      if (timer !== undefined) clearInterval(timer);
      closeRetiring?.();
      try {
        unlinkSync(retiringRecord);
      } catch {
        // Never written.
      }
      if (retiring) return;
      removeOwnSocket();
      releasePidfile(paths.record, record.instance);
    },
    watch(everyMs, onLost, onVanished) {
      if (pipe) return;
      timer = setInterval(() => {
        if (retiring || inode === undefined) return;
        const now = inodeNow();
        if (now === inode) return;
        if (now === undefined) onVanished();
        else onLost();
      }, everyMs);
      timer.unref();
    },
  };
}
