import { connect, type Socket } from 'node:net';
import { parseGreeting } from '../../relay/greeting.js';
import { secureSocket } from '../../relay/paths.js';
import { type ControlReply, type ControlRequest, encode, type ServerStatus } from './protocol.js';

/** How long a live server may take to answer a request (generous: a loaded 2-core machine). */
export const ANSWER_WITHIN_MS = 5000;

type Asked = { reply: ControlReply; socket: Socket } | { unreachable: string };

/**
 * Sends one request on `path` and reads the one-line reply. `unreachable` when nothing listens
 * there (no file, a file a dead server left, no pipe), when the socket is not this user's
 * private one, or when no reply comes within `ms`. The socket is returned open.
 */
export function ask(path: string, request: ControlRequest, ms = ANSWER_WITHIN_MS): Promise<Asked> {
  const refused = secureSocket(path);
  if (refused !== null) return Promise.resolve({ unreachable: refused });
  return new Promise((resolve) => {
    const socket = connect(path);
    let buffered = '';
    const finish = (result: Asked): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if ('unreachable' in result) socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ unreachable: `${path} did not answer within ${ms} ms` }), ms);
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      // The shared server greets every connection first (src/relay/greeting.ts): not the reply.
      if (newline !== -1 && parseGreeting(buffered.slice(0, newline)) !== null) {
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
      if (newline === -1) return;
      try {
        finish({ reply: JSON.parse(buffered.slice(0, newline)) as ControlReply, socket });
      } catch {
        finish({ unreachable: `${path} answered something that is not a control reply` });
      }
    };
    const onClose = (): void => finish({ unreachable: `${path} closed without answering` });
    socket.on('error', (error: NodeJS.ErrnoException) => finish({ unreachable: nothingThere(path, error) }));
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(encode(request));
  });
}

/** The server's status, or why there is none. */
export async function askStatus(path: string, ms?: number): Promise<ServerStatus | { unreachable: string }> {
  const asked = await ask(path, { qmd: 'control', op: 'status' }, ms);
  if ('unreachable' in asked) return asked;
  asked.socket.destroy();
  const { reply } = asked;
  if (!reply.ok) return { unreachable: reply.error };
  if (reply.op !== 'status') return { unreachable: `${path} answered a status request with ${reply.op}` };
  const { qmd: _tag, ok: _ok, op: _op, ...status } = reply;
  return status;
}

export type StopResult =
  | { stopped: number; sessions?: number }
  | { unreachable: string }
  | { refused: string }
  | { stillRunning: number; afterMs: number };

/**
 * Asks the server on `path` to stop (its normal teardown), and waits up to `exitWithinMs` for
 * the connection to close: the server keeps it open until its process exits. `sessions`: the
 * clients it had (the shared server); `all`: their relays end too.
 */
export async function requestStop(
  path: string,
  index: string,
  exitWithinMs: number,
  options: { all?: boolean } = {},
): Promise<StopResult> {
  const asked = await ask(path, { qmd: 'control', op: 'stop', index, ...(options.all === true && { all: true }) });
  if ('unreachable' in asked) return asked;
  const { reply, socket } = asked;
  if (!reply.ok) {
    socket.destroy();
    return { refused: reply.error };
  }
  if (reply.op !== 'stop') {
    socket.destroy();
    return { refused: `${path} answered a stop request with ${reply.op}` };
  }
  const { pid, sessions } = reply;
  const closed = await new Promise<boolean>((resolve) => {
    if (socket.destroyed) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), exitWithinMs);
    socket.resume();
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  socket.destroy();
  if (!closed) return { stillRunning: pid, afterMs: exitWithinMs };
  return sessions === undefined ? { stopped: pid } : { stopped: pid, sessions };
}

function nothingThere(path: string, error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return `nothing listens on ${path} (no such socket)`;
  if (error.code === 'ECONNREFUSED') return `nothing listens on ${path} (a socket its server left behind)`;
  return `cannot connect to ${path}: ${error.code ?? error.message}`;
}
