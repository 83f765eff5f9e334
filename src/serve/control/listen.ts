import { unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { usesNamedPipes } from '../../platform.js';
import { secureDir } from '../../relay/paths.js';
import { type ControlHandlers, controlOnly } from './server.js';

/**
 * A listener that answers control requests only (the HTTP daemon's): created 0600 (umask) in
 * its private directory, unref'd (it never keeps the process alive: the HTTP listener does).
 * The caller holds the index's claim, so a socket file already there is a dead server's and is
 * replaced. Returns the function that closes it and removes the file.
 */
export async function listenControl(path: string, handlers: ControlHandlers): Promise<() => void> {
  const pipe = usesNamedPipes(process.platform);
  if (!pipe) {
    const refused = secureDir(path.slice(0, path.lastIndexOf('/')));
    if (refused !== null) throw new Error(`refusing the control socket: ${refused}`);
    removeSocket(path);
  }
  const server = createServer(controlOnly(handlers));
  await listenPrivately(server, path);
  server.unref();
  return () => {
    server.close();
    if (!pipe) removeSocket(path);
  };
}

/** Listens with umask 0177, so the socket is 0600 from its first instant. */
export function listenPrivately(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const previous = process.umask(0o177);
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
    process.umask(previous);
  });
}

function removeSocket(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Not there.
  }
}
