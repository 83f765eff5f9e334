import { Option } from 'commander';
import { MCP_DEFAULTS, type McpFlags, mcpCommand } from '../../serve/mcp.js';
import type { McpClient } from '../mcp-config/clients.js';
import type { DefineCommand } from './commands.js';
import { clientName, clientsHelpText, port } from './options.js';

/** `qmd mcp`, its `config` and `stop`: the server over stdio or HTTP, alone or shared. */
export const defineMcp: DefineCommand = (program, run) => {
  const mcp = program
    .command('mcp')
    .description('run the MCP server over stdio (default) or HTTP')
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .addOption(new Option('--port <port>', 'HTTP port (0: any free one)').argParser(port(0)).default(MCP_DEFAULTS.port))
    .option('--host <host>', 'HTTP host (loopback by default)', MCP_DEFAULTS.host)
    .option('--daemon', 'with --http: run in the background and write a pidfile')
    .option(
      '--token-file <file>',
      'with --http: the file holding the bearer token clients must send, read again when it changes (default: INDEX.mcp-token, made on first start; or QMD_HTTP_TOKEN)',
    )
    // Refused with a line saying why and what to use instead (src/serve/mcp.ts).
    .addOption(new Option('--token <token>').hideHelp())
    .option('--no-auth', 'with --http: no token; any local user can read your notes (a warning says so)')
    .option('--shared', 'relay to the one warm shared server of this index, starting it if needed (also QMD_SHARED=1)')
    .addOption(new Option('--shared-server', 'run the shared server itself (relays start it)').hideHelp())
    .option('--no-watch', 'serve the index as it is: do not keep it fresh as notes change (also QMD_WATCH=0)')
    .action(run((ctx, opts: McpFlags) => mcpCommand(ctx, opts)));
  mcp
    .command('config')
    .description('print the configuration of an MCP client for this qmd (stdout), and where that client reads it')
    .addOption(
      new Option('--client <name>', 'claude-desktop, claude-code, cursor, vscode, gemini-cli, codex or opencode')
        .argParser(clientName)
        .makeOptionMandatory(),
    )
    .option('--name <name>', 'the server’s name in the client’s configuration', 'qmd')
    .addHelpText('after', () => clientsHelpText())
    .action(
      run(async (ctx, opts: { client: McpClient; name: string }) => {
        const { mcpConfig } = await import('../mcp-config/command.js');
        // Commander hands `--http`, `--shared`, `--port`… to `mcp`, which defines them (as for stop).
        await mcpConfig(ctx, opts, mcp.opts<McpFlags>());
      }),
    );
  mcp
    .command('stop')
    .description('stop the background HTTP server started with --daemon, or with --shared the shared server')
    .option('--shared', 'stop the shared server of this index')
    .option('--all', "with --shared: end its clients' relays too (without it they start a new server at once)")
    .action(
      run(async (ctx, opts: { shared?: boolean; all?: boolean }) => {
        const { mcpStop } = await import('../../serve/daemon/stop.js');
        // Commander hands the `--shared` of `qmd mcp stop --shared` to `mcp`, which has an
        // option of that name (the root parses every option it or a parent knows): read both.
        await mcpStop(ctx, {
          shared: opts.shared === true || mcp.opts<McpFlags>().shared === true,
          all: opts.all === true,
        });
      }),
    );
};

/** `qmd lifecycle`: the machines as a diagram or code, a trace as a timeline, a live inspector. */
export const defineLifecycle: DefineCommand = (program, run) => {
  const lifecycle = program.command('lifecycle').description('see the MCP server lifecycle machine');
  lifecycle
    .command('export')
    .description('the machine as a diagram or code, generated from its definition')
    .addOption(
      new Option('--format <format>', 'output format')
        .choices(['mermaid', 'dot', 'stately', 'json'])
        .default('mermaid'),
    )
    .addOption(
      new Option('--machine <machine>', 'which machine: the server lifecycle, or --shared’s server and session')
        .choices(['lifecycle', 'shared-server', 'session'])
        .default('lifecycle'),
    )
    .action(
      run(async (ctx, opts: { format: string; machine: string }) => {
        const { lifecycleExport } = await import('../commands/lifecycle.js');
        await lifecycleExport(ctx, opts.format, opts.machine);
      }),
    );
  lifecycle
    .command('trace')
    .description('print a QMD_LIFECYCLE_TRACE file as a timeline')
    .argument('<file>', 'the JSONL trace')
    .option('--all', 'every run in the file, not only the last')
    .action(
      run(async (ctx, file: string, opts: { all?: boolean }) => {
        const { lifecycleTrace } = await import('../commands/lifecycle.js');
        await lifecycleTrace(ctx, file, opts);
      }),
    );
  lifecycle
    .command('inspect')
    .description('serve a local endpoint for QMD_INSPECT and a page for Stately’s inspector')
    .addOption(new Option('--port <port>', 'port').argParser(port(1)).default(8080))
    .option('--host <host>', 'host', '127.0.0.1')
    .action(
      run(async (ctx, opts: { port: number; host: string }) => {
        const { lifecycleInspect } = await import('../commands/lifecycle.js');
        await lifecycleInspect(ctx, opts);
      }),
    );
};
