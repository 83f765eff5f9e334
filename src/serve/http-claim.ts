import { QmdError } from '../errors.js';
import { hostFacts } from '../relay/paths.js';
import { askStatus } from './control/client.js';
import type { ServerStatus } from './control/protocol.js';
import { everyServer } from './control/registry.js';

/**
 * One `qmd mcp --http` per index, the daemon or a foreground one (both claim the index's pidfile
 * and control socket, `daemon/child.ts`), and what to say when a server cannot bind its port.
 */

/** Refuses a second HTTP server for an index one already serves, saying which and how to stop it. */
export async function refuseIfServed(control: string): Promise<void> {
  const running = await askStatus(control);
  if ('unreachable' in running) return;
  throw new QmdError(
    'INDEX_LOCKED',
    `${serverName(running)} (pid ${running.pid}) already serves this index at ${running.url}; use it, or stop it with qmd mcp stop`,
  );
}

/** `the daemon`, `qmd mcp --http`: how a status names the HTTP server it comes from. */
export function serverName(status: Pick<ServerStatus, 'kind'>): string {
  return status.kind === 'daemon' ? 'the daemon (qmd mcp --http --daemon)' : 'qmd mcp --http';
}

/**
 * One line for a failed bind: what holds the port when it can be told (this user's qmd HTTP
 * servers answer on their control sockets, which say their URL, pid and index) and what to do.
 */
export async function bindFailure(
  error: NodeJS.ErrnoException,
  where: { host: string; port: number; index: string },
  env: NodeJS.ProcessEnv,
): Promise<QmdError> {
  const { host, port, index } = where;
  const at = `cannot listen on ${host}:${port}`;
  const elsewhere = 'choose another port (--port N, or --port 0 for any free one)';
  switch (error.code) {
    case 'EADDRINUSE': {
      const holder = (await httpServersOfThisUser(env)).find((s) => portOf(s.url) === port);
      if (holder !== undefined) {
        const stop = holder.index === index ? 'qmd mcp stop' : `qmd mcp stop --index ${holder.index}`;
        return new QmdError(
          'BAD_ARGUMENT',
          `${at}: ${serverName(holder)} (pid ${holder.pid}) listens there, serving ${holder.index}; stop it with ${stop}, or ${elsewhere}`,
        );
      }
      return new QmdError(
        'BAD_ARGUMENT',
        `${at}: the port is in use (EADDRINUSE) by another program, or by a qmd of another user; ${elsewhere}`,
      );
    }
    case 'EACCES':
      return new QmdError(
        'BAD_ARGUMENT',
        `${at}: permission denied (EACCES: ports below 1024 need privileges); ${elsewhere}`,
      );
    case 'EADDRNOTAVAIL':
      return new QmdError(
        'BAD_ARGUMENT',
        `${at}: ${host} is not an address of this machine (EADDRNOTAVAIL); use --host 127.0.0.1`,
      );
    default:
      return new QmdError('BAD_ARGUMENT', `${at}: ${error.code ?? error.message}`, { cause: error });
  }
}

/**
 * This user's HTTP servers that answer: every `http-*.sock` in the place and the old places
 * (`registry.ts`; never a PID from a file). None on Windows, whose pipes cannot be listed this way.
 */
export async function httpServersOfThisUser(env: NodeJS.ProcessEnv): Promise<ServerStatus[]> {
  const found = await everyServer(hostFacts(env));
  return found
    .filter((s) => (s.role === 'http' || s.role === 'daemon') && s.status.url !== undefined)
    .map((s) => s.status);
}

function portOf(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  try {
    return Number(new URL(url).port);
  } catch {
    return undefined;
  }
}
