import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { envText } from '../../env.js';
import { QmdError } from '../../errors.js';
import { loadOrCreateToken, readTokenFile, tokenPath } from '../../serve/http-token.js';
import type { McpFlags } from '../../serve/mcp.js';
import { mistypedIndex } from '../../store/paths.js';
import type { CliContext } from '../context.js';
import type { Launch, McpClient } from './clients.js';

export interface McpConfigFlags {
  client: McpClient;
  /** The server's name in the client's configuration (default `qmd`). */
  name: string;
}

/**
 * `qmd mcp config --client NAME`: the client's configuration for `qmd mcp` on stdout, ready to
 * save or merge; on stderr, where that client reads it and what else to do. Everything the
 * server depends on is written into it, so the client's environment does not matter (a GUI
 * client started from the Dock has neither your shell's PATH nor its variables):
 * - the absolute path of the Node running this command, and of qmd's entry (`dist/qmd.mjs`);
 * - `--index` with the index's absolute path, and `--embed-model` when one is set (a local
 *   model file made absolute); `--shared` when asked (or `QMD_SHARED=1`); `--no-watch` when
 *   asked (or `QMD_WATCH=0`): a server keeps the index fresh unless the person said otherwise;
 * - `XDG_CACHE_HOME` when set, since downloaded models live under it.
 * `--http` describes a client of `qmd mcp --http` at `--host`/`--port`, with the bearer token
 * the server would use: from `--token-file`, else `QMD_HTTP_TOKEN`, else its file beside the
 * index (made now, 0600, if the server has not made it yet); none with `--no-auth`. The token is written only into the output, never onto a command line.
 */
export async function mcpConfig(ctx: CliContext, flags: McpConfigFlags, mcp: McpFlags): Promise<void> {
  if (mcp.token !== undefined) {
    throw new QmdError(
      'BAD_ARGUMENT',
      'qmd mcp config reads the token from its file (--token-file, else the one beside the index) or QMD_HTTP_TOKEN; drop --token',
    );
  }
  const shared = mcp.shared === true || ctx.config.shared.requested;
  if (mcp.http && mcp.shared) {
    throw new QmdError('BAD_ARGUMENT', '--shared is for stdio clients; --http is one server for every client already');
  }
  const mistyped = mistypedIndex(ctx.indexPath, ctx.env);
  if (mistyped !== undefined) throw mistyped;

  const noWatch = mcp.watch === false || !ctx.config.watch.enabled;
  const launch = mcp.http ? httpLaunch(ctx, mcp) : stdioLaunch(ctx, shared, noWatch);
  const { client } = flags;
  ctx.out(client.render(flags.name, launch));

  const files = client.files(process.platform);
  ctx.log.line(`qmd: ${client.title} reads this from ${files.join(', or ')}.`);
  ctx.log.line(
    `qmd: if that file exists, add the "${flags.name}" entry to it rather than replacing it${
      client.format === 'toml' ? ' (append the table)' : ''
    }.`,
  );
  if (launch.transport === 'http') {
    const args = ['--index', ctx.indexPath, 'mcp', '--http', '--daemon'];
    if (mcp.port !== 8181) args.push('--port', String(mcp.port));
    if (mcp.host !== '127.0.0.1') args.push('--host', mcp.host);
    if (mcp.auth === false) args.push('--no-auth');
    if (noWatch) args.push('--no-watch');
    ctx.log.line(`qmd: it connects to ${launch.url}; start that server first: qmd ${args.map(shellWord).join(' ')}`);
    if (mcp.auth !== false) ctx.log.line('qmd: it holds your bearer token: keep the file private (chmod 600).');
  } else if (client.id === 'claude-code') {
    ctx.log.line(
      `qmd: or, for every project: claude mcp add --scope user ${shellWord(flags.name)} -- ${[launch.command, ...launch.args].map(shellWord).join(' ')}`,
    );
  }
}

/** `node /abs/dist/qmd.mjs --index /abs/index.sqlite [--embed-model M] mcp [--shared] [--no-watch]`. */
function stdioLaunch(ctx: CliContext, shared: boolean, noWatch: boolean): Launch {
  const entry = process.argv[1];
  if (entry === undefined) throw new QmdError('BAD_ARGUMENT', 'cannot tell where qmd is installed (no script path)');
  const model = ctx.config.embed.model;
  const args = [
    realpathSync(entry),
    '--index',
    ctx.indexPath,
    // Already absolute when local (src/cli/config.ts), as the index stores it.
    ...(model === undefined ? [] : ['--embed-model', model]),
    'mcp',
    ...(shared ? ['--shared'] : []),
    ...(noWatch ? ['--no-watch'] : []),
  ];
  const cache = envText(ctx.env, 'XDG_CACHE_HOME');
  return {
    transport: 'stdio',
    command: process.execPath,
    args,
    env: cache === undefined ? {} : { XDG_CACHE_HOME: resolve(cache) },
  };
}

function httpLaunch(ctx: CliContext, mcp: McpFlags): Launch {
  const host = mcp.host.includes(':') ? `[${mcp.host}]` : mcp.host;
  const url = `http://${host}:${mcp.port}/mcp`;
  if (mcp.auth === false) return { transport: 'http', url, headers: {} };
  // The server's own order (src/serve/mcp.ts): --token-file, QMD_HTTP_TOKEN, the default file.
  if (mcp.tokenFile !== undefined) {
    const given = resolve(mcp.tokenFile);
    const token = readTokenFile(given);
    if (token === undefined)
      throw new QmdError('BAD_ARGUMENT', `the token file ${given} (--token-file) does not exist`);
    return { transport: 'http', url, headers: { Authorization: `Bearer ${token}` } };
  }
  const variable = ctx.config.http.token;
  if (variable !== undefined) return { transport: 'http', url, headers: { Authorization: `Bearer ${variable}` } };
  const file = tokenPath(ctx.indexPath);
  try {
    // As the server does on its first start (src/serve/http.ts): the default folder may not exist yet.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  } catch {
    // loadOrCreateToken says why it cannot write there.
  }
  const { token } = loadOrCreateToken(file);
  return { transport: 'http', url, headers: { Authorization: `Bearer ${token}` } };
}

/** As a POSIX shell reads it: bare when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
