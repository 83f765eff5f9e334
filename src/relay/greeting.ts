/**
 * The first line a shared server writes on every connection it takes as a session, before any
 * JSON-RPC: who is serving. A relay waits for it (bounded by `QMD_SHARED_CONNECT_MS`) before it
 * trusts the connection: a server that is stopped (SIGSTOP) or a listener that never answers
 * accepts connections all the same (the kernel's backlog does), and only a line from the
 * process itself says it can serve. It is consumed by the relay, never forwarded to a client.
 *
 *   {"qmd":"shared-server","pid":1234,"index":"/home/u/.cache/qmd/index.sqlite","version":"0.1.0","model":null}
 */
export interface Greeting {
  qmd: 'shared-server';
  pid: number;
  /** The index it serves: a relay for another index refuses it. */
  index: string;
  version: string;
  /**
   * The embedding model it was told to use (`--embed-model`, `QMD_EMBED_MODEL`), or null: the
   * index's own. A relay told another refuses it (it would search with a model its client did
   * not ask for). Absent (an older server): as null.
   */
  model?: string | null;
}

/** A greeting is one short line; anything longer before a newline is not one. */
export const MAX_GREETING_BYTES = 4096;

export function greetingLine(fields: Omit<Greeting, 'qmd'>): string {
  const greeting: Greeting = { qmd: 'shared-server', ...fields };
  return `${JSON.stringify(greeting)}\n`;
}

/** The greeting in `line`, or `null` when the line is anything else. */
export function parseGreeting(line: string): Greeting | null {
  try {
    const value = JSON.parse(line) as Partial<Greeting> | null;
    if (
      value !== null &&
      typeof value === 'object' &&
      value.qmd === 'shared-server' &&
      Number.isSafeInteger(value.pid) &&
      typeof value.index === 'string' &&
      typeof value.version === 'string' &&
      (value.model === undefined || value.model === null || typeof value.model === 'string')
    ) {
      return value as Greeting;
    }
  } catch {
    // Not JSON: not a greeting.
  }
  return null;
}

/**
 * Why a relay refuses a greeting, or `null` when it passes every check: it names a live process
 * other than the relay itself (a greeting is a process's word about itself; one naming a pid
 * that does not exist is not), a version that parses (`compareVersions`), this relay's index,
 * and the embedding model this relay was told to use (null = the index's own). A line that is
 * no greeting at all is refused before this (`parseGreeting`).
 */
export function greetingProblem(
  greeting: Greeting,
  expected: { index: string; model: string | null; self: number; alive: (pid: number) => boolean },
): string | null {
  if (greeting.pid <= 0 || greeting.pid === expected.self || !expected.alive(greeting.pid))
    return `it greets as pid ${greeting.pid}, which is no server process`;
  if (compareVersions(greeting.version, greeting.version) === undefined)
    return `it greets as version ${JSON.stringify(greeting.version.slice(0, 40))}, which is no qmd version`;
  if (greeting.index !== expected.index) return `the server on this socket serves ${greeting.index}`;
  const served = greeting.model ?? null;
  if (served !== expected.model) {
    const theirs = served === null ? "the index's own embedding model" : `the embedding model ${served}`;
    return `it searches with ${theirs}, this client names ${expected.model ?? 'none'}`;
  }
  return null;
}

/**
 * Orders two qmd versions (`MAJOR.MINOR.PATCH`, an optional `-prerelease` ranking below the
 * release): negative when `a` is older, positive when newer, 0 when equal; `undefined` when
 * either is not such a version, which a relay treats as "not older" (it never replaces what it
 * cannot order). Prereleases of one release compare as strings.
 */
export function compareVersions(a: string, b: string): number | undefined {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (pa === undefined || pb === undefined) return undefined;
  for (let i = 0; i < 3; i++) {
    const d = pa.numbers[i]! - pb.numbers[i]!;
    if (d !== 0) return Math.sign(d);
  }
  if (pa.pre === pb.pre) return 0;
  if (pa.pre === undefined) return 1;
  if (pb.pre === undefined) return -1;
  return pa.pre < pb.pre ? -1 : 1;
}

function parseVersion(version: string): { numbers: number[]; pre: string | undefined } | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  if (match === null) return undefined;
  return { numbers: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] };
}

/**
 * A line a shared server writes to a relay that is not for the client: `{"qmd":"relay",…}`,
 * tagged as the greeting is (a JSON-RPC message has no `qmd` member). The one op: `exit`, the
 * relay ends instead of starting a new server: the server was stopped with its clients (`qmd
 * mcp stop --shared --all`: exit 0), or it found the index damaged (`code` INDEX_CORRUPT: the
 * relay fails its client with `reason` and that code, and exits 1, as at a failed start).
 */
export interface RelayNotice {
  qmd: 'relay';
  op: 'exit';
  reason: string;
  code?: string;
}

export function relayNoticeLine(reason: string, code?: string): string {
  const notice: RelayNotice = { qmd: 'relay', op: 'exit', reason, ...(code !== undefined && { code }) };
  return `${JSON.stringify(notice)}\n`;
}

/** The notice in a parsed server line, or `null`. */
export function asRelayNotice(value: unknown): RelayNotice | null {
  if (value === null || typeof value !== 'object') return null;
  const notice = value as Partial<RelayNotice>;
  if (notice.qmd !== 'relay' || notice.op !== 'exit' || typeof notice.reason !== 'string') return null;
  return typeof notice.code === 'string' || notice.code === undefined ? (notice as RelayNotice) : null;
}
