import { linkSync, lstatSync, unlinkSync } from 'node:fs';
import { type HostFacts, usesNamedPipes } from '../platform.js';
import { ownSocketPath, retiringRecordPath, type SharedPaths } from '../relay/paths.js';
import { type PidRecord, releasePidfile, writeRecord } from './daemon/pidfile.js';

/**
 * The shared server's hold on its place (docs/design.md §2.2): the index's socket path relays
 * connect to, and the record that claims the index. The server binds its own socket
 * (`ownSocketPath`, named with its pid) and holds the place by a hard link to it at the index's
 * path: libuv unlinks the path a listener bound when it closes, whatever file is there by then,
 * so a server bound at the index's path could remove its successor's socket. It can lose the
 * place while it runs, and then it retires (takes no new session, answers `qmd status` and
 * `qmd mcp stop` on its own socket, and leaves when its last session ends):
 * - a relay of a newer qmd asks it to (`retire`);
 * - another server took the path (the inode changed): this one had stopped answering (a
 *   SIGSTOP, a machine asleep) and a relay started a successor, which judged it gone.
 * A path that vanished (a cleaner of `/tmp`: systemd-tmpfiles, macOS's periodic) is linked again
 * while the record is still its own, as tmux re-creates its socket.
 *
 * It never removes a socket file that is not its own (compared by inode), nor a record that is
 * not its own run's: both may be a successor's. Windows pipes have no links: there the server
 * listens on the index's pipe itself, and a retiring one stops listening (not reachable then).
 */
export interface SharedPlace {
  /** Where to listen: the server's own socket (the index's pipe on Windows). */
  readonly listenOn: string;
  /** Listening: take the index's path (a file there is a dead server's: the claim is ours). */
  hold(): void;
  /** Whether the index's path is still this server's socket. */
  holdsPath(): boolean;
  /** The path is gone but the claim is ours: link it again. False if that failed. */
  relink(): boolean;
  /** Gives the path and the record up (if still ours) and writes the retiring record. Idempotent. */
  retire(why: string): void;
  /** Teardown done: remove what is still ours (the path, the record, the retiring record). */
  leave(): void;
  /** Checks the path every `everyMs`; `onLost` hears a path another server took, `onVanished` one that is gone. */
  watch(everyMs: number, onLost: () => void, onVanished: () => void): void;
  readonly retiring: boolean;
}

export function sharedPlace(options: { paths: SharedPaths; facts: HostFacts; record: PidRecord }): SharedPlace {
  const { paths, facts, record } = options;
  const pipe = usesNamedPipes(facts.platform);
  const own = pipe ? paths.socket : ownSocketPath(paths, record.pid, facts);
  const retiringRecord = retiringRecordPath(paths, record.pid, facts);
  let inode: number | bigint | undefined;
  let retiring = false;
  let timer: NodeJS.Timeout | undefined;

  const inodeOf = (path: string): number | bigint | undefined => {
    try {
      return lstatSync(path).ino;
    } catch {
      return undefined;
    }
  };
  const holdsPath = (): boolean => pipe || (inode !== undefined && inodeOf(paths.socket) === inode);
  const unlinkIfOurs = (): void => {
    if (pipe || !holdsPath()) return;
    try {
      unlinkSync(paths.socket);
    } catch {
      // Gone already.
    }
  };

  return {
    listenOn: own,
    get retiring() {
      return retiring;
    },
    hold() {
      if (pipe) return;
      inode = inodeOf(own);
      try {
        unlinkSync(paths.socket);
      } catch {
        // No dead server's socket there.
      }
      linkSync(own, paths.socket);
    },
    holdsPath,
    relink() {
      if (pipe) return true;
      try {
        linkSync(own, paths.socket);
        return true;
      } catch {
        return false;
      }
    },
    retire(why) {
      if (retiring) return;
      retiring = true;
      if (timer !== undefined) clearInterval(timer);
      unlinkIfOurs();
      releasePidfile(paths.record, record.instance);
      try {
        writeRecord(retiringRecord, { ...record, control: own, retiring: why });
      } catch {
        // Information only: `qmd status` then does not list it.
      }
    },
    leave() {
      if (timer !== undefined) clearInterval(timer);
      try {
        unlinkSync(retiringRecord);
      } catch {
        // Never written.
      }
      if (retiring) return;
      unlinkIfOurs();
      releasePidfile(paths.record, record.instance);
    },
    watch(everyMs, onLost, onVanished) {
      if (pipe) return;
      timer = setInterval(() => {
        if (retiring || inode === undefined) return;
        const now = inodeOf(paths.socket);
        if (now === inode) return;
        if (now === undefined) onVanished();
        else onLost();
      }, everyMs);
      timer.unref();
    },
  };
}
