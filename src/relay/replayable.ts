/**
 * Which client requests a relay may send again, to a new shared server, when the one it sent
 * them to went away without answering (docs/design.md §2.2). A request is safe to repeat when
 * answering it twice changes nothing a client could tell from answering it once: it reads.
 *
 * Every qmd tool reads the index and nothing else (`readOnlyHint` on each, `src/mcp/tools/`);
 * `test/relay/replayable.test.ts` fails when a tool is added that this list does not decide
 * about. A `tools/call` of a name not here (a typo, a tool of some other server) is not
 * repeated: the relay cannot know what it does.
 */
export const REPLAYABLE_TOOLS: ReadonlySet<string> = new Set(['query', 'get', 'multi_get', 'status']);

/** MCP methods that only read, or set something a new server may be told again (`logging/setLevel`). */
const REPLAYABLE_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'server/discover',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

/** Whether `method` (with `params`) may be sent to a second server after the first went away unanswering. */
export function isReplayable(method: string, params: unknown): boolean {
  if (method === 'tools/call') {
    const name = typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
    return typeof name === 'string' && REPLAYABLE_TOOLS.has(name);
  }
  return REPLAYABLE_METHODS.has(method);
}

/**
 * Sends of one request, in all: the first and two replays. A request that every server it is
 * sent to dies under (a query that crashes the process) must not restart servers for ever.
 */
export const MAX_SENDS = 3;
