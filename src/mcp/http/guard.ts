import { networkInterfaces, hostname as osHostname } from 'node:os';

/**
 * DNS-rebinding protection for `qmd mcp --http` (docs/design.md §6). A web page on
 * `evil.example` whose name the attacker re-points at 127.0.0.1 can make the browser talk to
 * us, but it cannot change what the browser sends as `Host` (`evil.example:8181`) or `Origin`
 * (`https://evil.example`). So a request is served only when its Host names this machine, and
 * its Origin, when there is one, does too. Non-browser clients send no Origin.
 *
 * SDK v2 exports the same two checks (`validateHostHeader`, `validateOriginHeader`: hostnames
 * only) over a list it is given; the transport options that did it per session are
 * deprecated. What is ours is the list (a wildcard bind accepts every interface's address and
 * the host name) and a refusal before the request reaches either HTTP leg. Ports are not
 * compared: the attack is about names, and a loopback client on another port is still this
 * machine.
 */
export interface OriginGuard {
  /** `null` when the request may be served, else why it is refused (sent with a 403). */
  check(headers: { host?: string | undefined; origin?: string | string[] | undefined }): string | null;
  /** The hostnames accepted, for messages and /health. */
  readonly hostnames: ReadonlySet<string>;
}

export const LOOPBACK_HOSTNAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

/** `::1` → `[::1]`: the form `new URL()` gives an IPv6 hostname, so both sides compare alike. */
function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The names that mean "this machine" for a server bound to `bindHost`: the loopback names,
 * the bind address itself, and — only when bound to every interface, which a user must ask
 * for — each interface address and the host name.
 */
export function allowedHostnames(bindHost: string): Set<string> {
  const names = new Set<string>(LOOPBACK_HOSTNAMES);
  if (!WILDCARDS.has(bindHost)) {
    names.add(bracketed(bindHost.toLowerCase()));
    return names;
  }
  names.add(osHostname().toLowerCase());
  for (const list of Object.values(networkInterfaces())) {
    for (const address of list ?? []) names.add(bracketed(address.address.toLowerCase()));
  }
  return names;
}

function hostnameOf(urlish: string): string | null {
  try {
    return new URL(urlish).hostname.toLowerCase();
  } catch {
    return null;
  }
}

export function createOriginGuard(bindHost: string): OriginGuard {
  const hostnames = allowedHostnames(bindHost);
  return {
    hostnames,
    check(headers) {
      const host = headers.host;
      if (!host) return 'Missing Host header';
      const name = hostnameOf(`http://${host}`);
      // qmd 2.8's words for both refusals, which its clients and tests look for.
      if (name === null || !hostnames.has(name)) return `Host not allowed: ${host}`;
      const origin = headers.origin;
      if (origin === undefined) return null;
      const value = Array.isArray(origin) ? origin.join(',') : origin;
      // `Origin: null` comes from sandboxed frames and file:// pages: not this machine's name.
      const originName = /^https?:\/\//i.test(value) ? hostnameOf(value) : null;
      if (originName === null || !hostnames.has(originName)) return `Origin not allowed: ${value}`;
      return null;
    },
  };
}
