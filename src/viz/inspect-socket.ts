import * as net from 'node:net';
import * as tls from 'node:tls';
import WebSocket, { type ClientOptions } from 'ws';

/**
 * A WebSocket (ws 8.23.1) to a Stately inspector that can never keep qmd alive.
 *
 * Measured here (Node 20, ws 8.23.1):
 * - The socket is unref'd the moment it exists, through ws's `createConnection` hook. A
 *   pending connect to an address that never answers (10.255.255.1) did not hold the loop:
 *   the process exited at once, with `ConnectWrap` still listed.
 * - Once open, messages sent on an unref'd socket still arrive: 5,000 × 2 KB sent and the
 *   process left to exit on its own, the receiver got all 5,000 (pending writes hold the loop
 *   only until the kernel takes them).
 * - A host name is resolved first with `dns.lookup`, a ref'd request that does hold the loop
 *   (27–110 ms for `localhost` in this sandbox; as long as the resolver takes for a dead DNS).
 *   `localhost` is therefore mapped to 127.0.0.1 here, without DNS.
 * - No compression (`perMessageDeflate: false`): deflate runs on the thread pool, and
 *   uncompressed writes reach the kernel synchronously.
 */
export function openInspectorSocket(url: string, headers: Record<string, string>): WebSocket {
  const secure = new URL(url).protocol === 'wss:';
  type ConnectOptions = net.NetConnectOpts & tls.ConnectionOptions & { host?: string; socketPath?: string };
  const connect = (opts: ConnectOptions): net.Socket => {
    const host = opts.host === 'localhost' ? '127.0.0.1' : opts.host;
    // Mirrors ws's own `netConnect`/`tlsConnect`: `path` must be the Unix socket path (undefined
    // here), not the request path, and TLS names the server unless it is an IP address.
    const socket = secure
      ? tls.connect({
          ...opts,
          host,
          path: undefined,
          servername: opts.servername ?? (net.isIP(host ?? '') ? '' : host),
        })
      : net.connect({ ...opts, host, path: opts.socketPath } as net.NetConnectOpts);
    socket.unref();
    return socket;
  };
  return new WebSocket(url, {
    perMessageDeflate: false,
    headers,
    // The handshake bound is a socket timeout, which Node keeps unref'd: it ends a connection
    // that opened but never upgraded, without holding the loop.
    handshakeTimeout: 5000,
    createConnection: connect as unknown as ClientOptions['createConnection'],
  });
}
