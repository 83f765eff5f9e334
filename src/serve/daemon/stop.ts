import type { CliContext } from '../../cli/context.js';
import { QmdError } from '../../errors.js';
import { processExists } from '../../lifecycle/parent.js';
import { daemonControlPath, hostFacts, sharedPaths } from '../../relay/paths.js';
import { askStatus, requestStop } from '../control/client.js';
import { type FoundServer, serversOfIndex } from '../control/registry.js';
import { pidfilePath, readPidfile, removePidfile } from './pidfile.js';

/**
 * `qmd mcp stop [--shared]`: the index's HTTP server (the daemon, or a foreground `qmd mcp
 * --http`: both answer on the index's control socket), or with `--shared` every shared server
 * of the index that takes clients (at the place, and at an older qmd's place), with `--all`
 * the retiring ones too (`registry.ts`: their control sockets are derived from the index).
 */
export async function mcpStop(ctx: CliContext, flags: { shared?: boolean; all?: boolean } = {}): Promise<void> {
  const facts = hostFacts(ctx.env);
  if (flags.shared) {
    await stopShared(ctx, flags.all === true);
    return;
  }
  if (flags.all)
    throw new QmdError('BAD_ARGUMENT', '--all ends the clients of the shared server: use it with --shared');
  let control = daemonControlPath(ctx.indexPath, facts);
  let running = await askStatus(control);
  if ('unreachable' in running) {
    // An older qmd's HTTP server, at its place.
    const old = (await serversOfIndex(ctx.indexPath, facts)).servers.find(
      (s) => s.role === 'http' || s.role === 'daemon',
    );
    if (old !== undefined) {
      control = old.socket;
      running = old.status;
    }
  }
  const what = !('unreachable' in running) && running.kind === 'http' ? 'HTTP server' : 'daemon';
  await stopServer(ctx, { control, record: pidfilePath(ctx.indexPath), what });
}

/**
 * Every shared server of the index that takes clients, and with `all` the retiring ones, each
 * asked at once; one line each. A retiring server left running (no `--all`) is named, with
 * the command that ends it. Nothing answering at all: the error it always was.
 */
async function stopShared(ctx: CliContext, all: boolean): Promise<void> {
  const facts = hostFacts(ctx.env);
  const paths = sharedPaths(ctx.indexPath, facts);
  const found = await serversOfIndex(ctx.indexPath, facts);
  const targets = found.servers.filter((s) => s.role === 'shared' || (all && s.role === 'retiring'));
  if (targets.length === 0) {
    await stopServer(ctx, { control: paths.socket, record: paths.record, what: 'shared server', all });
  } else {
    const failures: unknown[] = [];
    await Promise.all(
      targets.map((server) =>
        stopServer(ctx, {
          control: server.socket,
          record: server.socket === paths.socket ? paths.record : undefined,
          what: 'shared server',
          label: label(server),
          ...(server.oldPlace || server.role === 'retiring' ? { detail: `qmd ${server.status.version}` } : {}),
          all,
        }).catch((error: unknown) => failures.push(error)),
      ),
    );
    if (failures.length > 0) throw failures[0];
  }
  for (const server of found.servers) {
    if (all || server.role !== 'retiring') continue;
    const live = server.status.sessions?.live ?? 0;
    ctx.out(
      `The ${label(server)} (pid ${server.status.pid}, qmd ${server.status.version}) still serves ${live} client(s) and leaves when they do (qmd mcp stop --shared --all ends it now)`,
    );
  }
  for (const server of found.silent)
    ctx.out(
      `The retiring shared server (pid ${server.pid}, qmd ${server.version}) does not answer: it leaves when its clients do (kill ${server.pid} ends it now)`,
    );
}

/** How a stop names a shared server: `shared server`, `retiring shared server`, `… at an older qmd's place DIR`. */
function label(server: FoundServer): string {
  const at = server.oldPlace ? ` at an older qmd's place ${server.place}` : '';
  return `${server.role === 'retiring' ? 'retiring shared server' : 'shared server'}${at}`;
}

/**
 * A server's teardown is bounded by its machine: drain 5 s, each step 2 s, then the watchdog's
 * 1 s (docs/design.md §2.1); the shared server's sessions have their own bounds inside its drain.
 * Waiting well past their sum means a healthy server is never reported stuck.
 */
const EXIT_WITHIN_MS = 30_000;
/** After its files are closed: an exiting process is reaped by its parent (init) within ms; a zombie nobody reaps is no server. */
const REAPED_WITHIN_MS = 1000;

/**
 * `qmd mcp stop [--shared]`: asks the server over its control socket (derived from the index)
 * to run its normal teardown, and waits for the connection to close, which happens when its
 * process exits. No PID is read from a file, verified or signalled: a pidfile that names
 * another process (recycled, or tampered with) is never acted on, and cannot hide a running
 * server either, since the socket is found from the index alone.
 *
 * Exit codes: 0 when the server stopped; 1 when nothing answered (any record left is stale:
 * reported and removed), it refused, or it did not exit within the bound. "Nothing was stopped"
 * is worth a non-zero code to a script, which can add `|| true` when it does not care.
 */
export async function stopServer(
  ctx: CliContext,
  target: {
    control: string;
    /** The record to clean when nothing answers (none for a retiring or old-place server). */
    record: string | undefined;
    what: 'daemon' | 'HTTP server' | 'shared server';
    /** How the lines name it, when not by `what`. */
    label?: string;
    /** Said beside its pid (`qmd 0.1.0`). */
    detail?: string;
    all?: boolean;
  },
): Promise<void> {
  const { control, record, what } = target;
  const name = target.label ?? what;
  const all = target.all === true;
  const result = await requestStop(control, ctx.indexPath, EXIT_WITHIN_MS, { all });
  if ('unreachable' in result) {
    const stale = record === undefined ? null : readPidfile(record);
    const nothing = what === 'shared server' ? 'no shared server' : 'no HTTP server (daemon or qmd mcp --http)';
    if (stale === null)
      throw new QmdError('NOT_FOUND', `${nothing} is running for ${ctx.indexPath} (${result.unreachable})`);
    removePidfile(record!);
    const who = stale === 'corrupt' ? 'an unreadable record' : `a record naming pid ${stale.pid}`;
    throw new QmdError(
      'NOT_FOUND',
      `${nothing} is running for ${ctx.indexPath} (${result.unreachable}); removed ${who} (${record}) and signalled nothing`,
    );
  }
  if ('refused' in result) throw new QmdError('BAD_ARGUMENT', `the ${name} refused to stop: ${result.refused}`);
  if ('stillRunning' in result)
    throw new QmdError(
      'INDEX_LOCKED',
      `the ${name} (pid ${result.stillRunning}) began its teardown but had not exited after ${result.afterMs / 1000} s`,
    );
  // The connection closes when the process closes its files, a moment before the process is
  // gone: wait that moment out (`kill(pid, 0)` sends nothing; the pid is the server's own word).
  await until(() => !processExists(result.stopped), REAPED_WITHIN_MS);
  // It removes its own record; one killed outright mid-teardown could not, and a record that
  // names another process was never its. Once nothing answers, whatever is left is stale.
  if (record !== undefined && readPidfile(record) !== null && 'unreachable' in (await askStatus(control)))
    removePidfile(record);
  // Success goes to stdout, without the `qmd:` of errors: a script reads it as the result, a person as news.
  ctx.out(
    `Stopped the ${name} (pid ${result.stopped}${target.detail === undefined ? '' : `, ${target.detail}`}): it ran its teardown and exited${clientsAfterStop(result.sessions, all)}`,
  );
}

/**
 * What became of the shared server's clients: with `--all` their relays ended with it; else
 * each relay started (or found) a new server at once, and its client noticed nothing.
 */
function clientsAfterStop(sessions: number | undefined, all: boolean): string {
  if (sessions === undefined) return '';
  if (sessions === 0) return '; no client was connected';
  const clients = `${sessions} connected client${sessions === 1 ? '' : 's'}`;
  if (all) return `; the relays of its ${clients} ended with it`;
  return `; its ${clients} carried on: their relays start a new server at once (--all ends them too)`;
}

async function until(fact: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!fact() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}
