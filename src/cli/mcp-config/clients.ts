import { QmdError } from '../../errors.js';
import { tomlKey, tomlString } from './toml.js';

/**
 * How a client starts or reaches `qmd mcp`: a command it spawns (stdio), or a URL with the
 * headers to send (Streamable HTTP).
 */
export type Launch =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { transport: 'http'; url: string; headers: Record<string, string> };

/**
 * One MCP client: its configuration for a server named `name`, in the file format and schema
 * it reads, and where it reads it. Each format follows the client's own documentation (read
 * 2026-12-04, with the releases then on the npm registry: Claude Code 2.1.332, Gemini CLI
 * 0.61.0, Codex 0.171.0, opencode 1.18.33; docs/design.md §6 says how each was checked).
 */
export interface McpClient {
  id: string;
  title: string;
  /** Other names `--client` takes (compared without case, spaces, dashes or dots). */
  aliases: readonly string[];
  format: 'json' | 'toml';
  /** Where it reads its servers on `platform`, most general first. */
  files(platform: NodeJS.Platform): string[];
  /** The text to put there; BAD_ARGUMENT when the client cannot use this launch. */
  render(name: string, launch: Launch): string;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** `command`/`args`/`env` as most clients spell them; `env` only when there is one. */
function spawnFields(launch: Extract<Launch, { transport: 'stdio' }>): Record<string, unknown> {
  return {
    command: launch.command,
    args: launch.args,
    ...(Object.keys(launch.env).length > 0 && { env: launch.env }),
  };
}

function headerFields(launch: Extract<Launch, { transport: 'http' }>): Record<string, unknown> {
  return Object.keys(launch.headers).length > 0 ? { headers: launch.headers } : {};
}

/** `~/x` on Unix, `%USERPROFILE%\x` on Windows. */
function home(platform: NodeJS.Platform, relative: string): string {
  return platform === 'win32' ? `%USERPROFILE%\\${relative.replaceAll('/', '\\')}` : `~/${relative}`;
}

/** A per-user application folder: Application Support on macOS, %APPDATA% on Windows, ~/.config elsewhere. */
function appData(platform: NodeJS.Platform, relative: string): string {
  if (platform === 'darwin') return `~/Library/Application Support/${relative}`;
  if (platform === 'win32') return `%APPDATA%\\${relative.replaceAll('/', '\\')}`;
  return `~/.config/${relative}`;
}

export const CLIENTS: readonly McpClient[] = [
  {
    id: 'claude-desktop',
    title: 'Claude Desktop',
    aliases: ['claude desktop', 'claude-app'],
    format: 'json',
    files: (platform) => [
      `${appData(platform, 'Claude/claude_desktop_config.json')} (${
        platform === 'linux' ? 'Anthropic has no Linux release: where Linux builds look; ' : ''
      }Settings > Developer > Edit Config opens it)`,
    ],
    render(name, launch) {
      if (launch.transport === 'http') {
        // Its JSON config starts servers over stdio only; a remote server is a connector it
        // reaches from Anthropic's side, over HTTPS with OAuth, never 127.0.0.1.
        throw new QmdError(
          'BAD_ARGUMENT',
          'Claude Desktop starts its servers over stdio only (a remote server there is a connector, not 127.0.0.1): use qmd mcp config --client claude-desktop, with --shared for one warm server',
        );
      }
      return json({ mcpServers: { [name]: spawnFields(launch) } });
    },
  },
  {
    id: 'claude-code',
    title: 'Claude Code',
    aliases: ['claude', 'claude code'],
    format: 'json',
    files: (platform) => [
      `${home(platform, '.claude.json')} ("mcpServers": every project, what claude mcp add --scope user writes)`,
      '.mcp.json at a project root (that project; Claude Code asks before using it)',
    ],
    render(name, launch) {
      const server =
        launch.transport === 'stdio'
          ? { type: 'stdio', ...spawnFields(launch) }
          : { type: 'http', url: launch.url, ...headerFields(launch) };
      return json({ mcpServers: { [name]: server } });
    },
  },
  {
    id: 'cursor',
    title: 'Cursor',
    aliases: [],
    format: 'json',
    files: (platform) => [
      `${home(platform, '.cursor/mcp.json')} (every project)`,
      '.cursor/mcp.json in a project (that project)',
    ],
    render(name, launch) {
      const server = launch.transport === 'stdio' ? spawnFields(launch) : { url: launch.url, ...headerFields(launch) };
      return json({ mcpServers: { [name]: server } });
    },
  },
  {
    id: 'vscode',
    title: 'VS Code',
    aliases: ['vs code', 'code', 'visual studio code', 'copilot'],
    format: 'json',
    files: (platform) => [
      `${appData(platform, 'Code/User/mcp.json')} (your profile: the command "MCP: Open User Configuration")`,
      '.vscode/mcp.json in a workspace (that workspace)',
    ],
    render(name, launch) {
      const server =
        launch.transport === 'stdio'
          ? { type: 'stdio', ...spawnFields(launch) }
          : { type: 'http', url: launch.url, ...headerFields(launch) };
      return json({ servers: { [name]: server } });
    },
  },
  {
    id: 'gemini-cli',
    title: 'Gemini CLI',
    aliases: ['gemini'],
    format: 'json',
    files: (platform) => [
      `${home(platform, '.gemini/settings.json')} ("mcpServers": every project)`,
      '.gemini/settings.json in a project (that project)',
    ],
    render(name, launch) {
      // `httpUrl` is its Streamable HTTP (its `url` is SSE).
      const server =
        launch.transport === 'stdio' ? spawnFields(launch) : { httpUrl: launch.url, ...headerFields(launch) };
      return json({ mcpServers: { [name]: server } });
    },
  },
  {
    id: 'codex',
    title: 'Codex',
    aliases: ['codex cli', 'openai codex'],
    format: 'toml',
    files: (platform) => [
      `${home(platform, '.codex/config.toml')} ($CODEX_HOME/config.toml: every project)`,
      '.codex/config.toml in a trusted project (that project)',
    ],
    render(name, launch) {
      const table = `mcp_servers.${tomlKey(name)}`;
      if (launch.transport === 'http') {
        // `http_headers` holds literal headers; Codex refuses an inline `bearer_token`.
        const headers = Object.entries(launch.headers).map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`);
        return [
          `[${table}]`,
          `url = ${tomlString(launch.url)}`,
          ...(headers.length > 0 ? [`http_headers = { ${headers.join(', ')} }`] : []),
          '',
        ].join('\n');
      }
      const lines = [
        `[${table}]`,
        `command = ${tomlString(launch.command)}`,
        `args = [${launch.args.map(tomlString).join(', ')}]`,
      ];
      const env = Object.entries(launch.env);
      if (env.length > 0) lines.push('', `[${table}.env]`, ...env.map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`));
      return `${lines.join('\n')}\n`;
    },
  },
  {
    id: 'opencode',
    title: 'opencode',
    aliases: ['open code'],
    format: 'json',
    files: (platform) => [
      `${home(platform, '.config/opencode/opencode.json')} ($XDG_CONFIG_HOME/opencode/opencode.json: every project)`,
      'opencode.json at a project root (that project)',
    ],
    render(name, launch) {
      const server =
        launch.transport === 'stdio'
          ? {
              type: 'local',
              // One array: the program, then its arguments.
              command: [launch.command, ...launch.args],
              ...(Object.keys(launch.env).length > 0 && { environment: launch.env }),
              enabled: true,
            }
          : { type: 'remote', url: launch.url, ...headerFields(launch), enabled: true };
      return json({ $schema: 'https://opencode.ai/config.json', mcp: { [name]: server } });
    },
  },
];

const squash = (name: string): string => name.toLowerCase().replace(/[\s._-]+/g, '');

/** The client `--client` names (`Claude Desktop`, `claude-desktop`, `vscode`…), or undefined. */
export function findClient(name: string): McpClient | undefined {
  const wanted = squash(name);
  return CLIENTS.find((c) => [c.id, c.title, ...c.aliases].some((n) => squash(n) === wanted));
}
