import type { Socket } from 'node:net';
import { type ControlRequest, encode, parseControlLine, type ServerStatus } from './protocol.js';

/** What a server gives its control channel. */
export interface ControlHandlers {
  /** The index this server serves: a stop naming another one is refused. */
  index: string;
  status(): ServerStatus;
  /** Clients connected now (the shared server's sessions), said in the stop reply. */
  sessions?(): number;
  /**
   * Starts the normal teardown (the lifecycle's `shutdown()`); called after the reply is
   * written. `all`: the clients' relays are told to end too (the shared server).
   */
  stop(options: { all: boolean }): void;
  /**
   * The shared server only: a relay of `version` asks it to stop taking sessions and give up
   * its socket and record, and to leave once its last session ends. Returns why not, if it
   * will not (the version is not newer than its own); called before the reply is written.
   */
  retire?(version: string): { refused: string } | { sessions: number };
}

/** A first line longer than this with no newline is no control request: it is handed to MCP as is. */
const MAX_CONTROL_LINE_BYTES = 64 * 1024;

/**
 * For the shared server's socket: reads a new connection's first line; a control request is
 * answered here, anything else is handed to `mcp` with the bytes read so far put back, so the
 * MCP session sees the stream from its first byte. Until the first line, the connection is
 * unref'd: a peer that says nothing keeps no process alive. A peer that hangs up before a whole
 * line had no conversation: its socket is destroyed.
 */
export function routeFirstLine(handlers: ControlHandlers, mcp: (socket: Socket) => void): (socket: Socket) => void {
  return (socket) => {
    socket.unref();
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    const detach = (): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
    };
    const handOver = (): void => {
      detach();
      socket.pause();
      socket.unshift(buffered);
      socket.ref();
      mcp(socket);
      // pause() stops a later 'data' listener from resuming the stream (pipe() resumes it itself).
      if (socket.listenerCount('data') > 0) socket.resume();
    };
    const onEnd = (): void => {
      detach();
      socket.destroy();
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline === -1) {
        if (buffered.length > MAX_CONTROL_LINE_BYTES) handOver();
        return;
      }
      const parsed = parseControlLine(buffered.subarray(0, newline).toString('utf8'));
      if (parsed === 'other') {
        handOver();
        return;
      }
      detach();
      answer(socket, parsed, handlers);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
  };
}

/** For a listener that serves control requests only (the HTTP daemon's control socket). */
export function controlOnly(handlers: ControlHandlers): (socket: Socket) => void {
  return routeFirstLine(handlers, (socket) => {
    socket.end(encode({ qmd: 'control', ok: false, error: 'this socket answers control requests only' }));
  });
}

function answer(socket: Socket, request: ControlRequest | { error: string }, handlers: ControlHandlers): void {
  // Anything after the request is not read (a stop's connection stays open until the exit).
  socket.on('data', () => {});
  if ('error' in request) {
    socket.end(encode({ qmd: 'control', ok: false, error: request.error }));
    return;
  }
  if (request.op === 'status') {
    socket.end(encode({ qmd: 'control', ok: true, op: 'status', ...handlers.status() }));
    return;
  }
  if (request.index !== undefined && request.index !== handlers.index) {
    socket.end(
      encode({ qmd: 'control', ok: false, error: `this server serves ${handlers.index}, not ${request.index}` }),
    );
    return;
  }
  if (request.op === 'retire') {
    const retired = handlers.retire?.(request.version) ?? {
      refused: 'this server does not retire (it is no shared server)',
    };
    if ('refused' in retired) socket.end(encode({ qmd: 'control', ok: false, error: retired.refused }));
    else socket.end(encode({ qmd: 'control', ok: true, op: 'retire', pid: process.pid, sessions: retired.sessions }));
    return;
  }
  const all = request.all === true;
  const sessions = handlers.sessions?.();
  // The connection stays open, unref'd, until this process exits: its closing is the asker's
  // news that teardown is complete. Nothing destroys it on the way (it is no MCP session).
  socket.write(
    encode({ qmd: 'control', ok: true, op: 'stop', pid: process.pid, ...(sessions !== undefined && { sessions }) }),
    () => handlers.stop({ all }),
  );
}
