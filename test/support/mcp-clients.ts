import { parse as parseToml } from 'smol-toml';

/**
 * What a client does with its configuration of one server, read the way that client reads it
 * (from each client's documentation, written apart from src/cli/mcp-config/, which renders it):
 * the program it spawns, with its arguments and the environment it adds to its own, or the URL
 * it posts to with the headers it sends. Throws when the client would not find a server there
 * or would not take it as stdio or Streamable HTTP.
 */
export type ClientLaunch =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { transport: 'http'; url: string; headers: Record<string, string> };

type Entry = Record<string, unknown>;

function entry(table: unknown, name: string, where: string): Entry {
  const server = (table as Record<string, unknown> | undefined)?.[name];
  if (typeof server !== 'object' || server === null) throw new Error(`no "${name}" under ${where}`);
  return server as Entry;
}

function strings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new Error(`${what} is not strings`);
  return value as string[];
}

function record(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new Error(`${what} is not a map of strings`);
  }
  return value as Record<string, string>;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} is not a string`);
  return value;
}

/** `command` + `args` + `env`, the shape most clients share. */
function spawned(server: Entry): ClientLaunch {
  return {
    transport: 'stdio',
    command: text(server.command, 'command'),
    args: server.args === undefined ? [] : strings(server.args, 'args'),
    env: record(server.env, 'env'),
  };
}

function posted(url: unknown, headers: unknown): ClientLaunch {
  return { transport: 'http', url: text(url, 'url'), headers: record(headers, 'headers') };
}

export const READERS: Record<string, (config: string, name: string) => ClientLaunch> = {
  // claude_desktop_config.json: stdio servers only.
  'claude-desktop': (config, name) => spawned(entry(JSON.parse(config).mcpServers, name, 'mcpServers')),
  // .mcp.json / ~/.claude.json: `type` stdio (the default) or http.
  'claude-code': (config, name) => {
    const server = entry(JSON.parse(config).mcpServers, name, 'mcpServers');
    if (server.type === 'http') return posted(server.url, server.headers);
    if (server.type !== undefined && server.type !== 'stdio') throw new Error(`type ${String(server.type)}`);
    return spawned(server);
  },
  // mcp.json: `url` (it picks Streamable HTTP or SSE itself), else `command`.
  cursor: (config, name) => {
    const server = entry(JSON.parse(config).mcpServers, name, 'mcpServers');
    return server.url !== undefined ? posted(server.url, server.headers) : spawned(server);
  },
  // mcp.json: `servers`, each with a `type`.
  vscode: (config, name) => {
    const server = entry(JSON.parse(config).servers, name, 'servers');
    if (server.type === 'http') return posted(server.url, server.headers);
    if (server.type !== 'stdio') throw new Error(`type ${String(server.type)}`);
    return spawned(server);
  },
  // settings.json: `httpUrl` is Streamable HTTP; `url` would be SSE, which qmd does not serve.
  'gemini-cli': (config, name) => {
    const server = entry(JSON.parse(config).mcpServers, name, 'mcpServers');
    if (server.url !== undefined) throw new Error('url means SSE to Gemini CLI');
    return server.httpUrl !== undefined ? posted(server.httpUrl, server.headers) : spawned(server);
  },
  // config.toml: [mcp_servers.NAME], `url` + `http_headers`, or `command` + `args` + [env].
  codex: (config, name) => {
    const server = entry(parseToml(config).mcp_servers, name, 'mcp_servers');
    if (server.bearer_token !== undefined) throw new Error('Codex refuses an inline bearer_token');
    return server.url !== undefined ? posted(server.url, server.http_headers) : spawned(server);
  },
  // opencode.json: `mcp`, type local (one `command` array, `environment`) or remote.
  opencode: (config, name) => {
    const server = entry(JSON.parse(config).mcp, name, 'mcp');
    if (server.enabled === false) throw new Error('disabled');
    if (server.type === 'remote') return posted(server.url, server.headers);
    if (server.type !== 'local') throw new Error(`type ${String(server.type)}`);
    const [command, ...args] = strings(server.command, 'command');
    return {
      transport: 'stdio',
      command: text(command, 'command[0]'),
      args,
      env: record(server.environment, 'environment'),
    };
  },
};
