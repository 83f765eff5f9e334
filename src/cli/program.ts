import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { McpFlags } from './commands/mcp.js';
import type { GetFlags, MultiGetFlags, SearchFlags } from './commands/read-commands.js';
import { type CliContext, createContext } from './context.js';
import { EXIT_USAGE, reportError } from './errors.js';
import { packageVersion } from './version.js';

function positiveInt(name: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1)
      throw new InvalidArgumentError(`${name} must be a whole number ≥ 1.`);
    return Number(value);
  };
}

/** 0 asks the OS for a free port (the one bound is printed); 1-65535 otherwise. */
function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('--port must be 0 to 65535.');
  return Number(value);
}

function score(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('must be a number from 0 to 1.');
  return n;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').filter(Boolean)];
}

/**
 * The command line. Each action loads its own module on demand, so `qmd mcp` does not pay
 * for the progress bar, the exporters or the inspector, and `qmd search` does not load the SDK.
 */
export function buildProgram(): Command {
  const program = new Command('qmd')
    .description('Local search for markdown notes, and an MCP server that never outlives its client.')
    .version(packageVersion(), '-V, --version')
    .option('--index <path>', 'index file (default: $QMD_INDEX, $INDEX_PATH, else $XDG_CACHE_HOME/qmd/index.sqlite)')
    .option('--debug', 'print stack traces with errors')
    .option(
      '--embed-model <model>',
      'embedding model: a .gguf path or an hf: URI (default: $QMD_EMBED_MODEL, else EmbeddingGemma 300M)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const context = (command: Command): CliContext => {
    const options = command.optsWithGlobals<{ index?: string; debug?: boolean; embedModel?: string }>();
    // The flag travels as QMD_EMBED_MODEL, so `resolveEmbedModel(ctx.env)` (src/cli/embed-model.ts)
    // is the one place every command and both MCP transports pick the model: flag, env, default.
    const env =
      options.embedModel === undefined ? process.env : { ...process.env, QMD_EMBED_MODEL: options.embedModel };
    return createContext(options, env);
  };
  const run =
    <A extends unknown[]>(load: (ctx: CliContext, ...args: A) => Promise<unknown>) =>
    async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const ctx = context(command);
      try {
        await load(ctx, ...(args.slice(0, -1) as A));
      } catch (error) {
        process.exitCode = reportError(error, ctx.log, ctx.debug);
      }
    };

  const collection = program.command('collection').description('manage the collections of markdown files');
  collection
    .command('add')
    .description('add a directory as a collection and index it now')
    .argument('<dir>', 'directory of markdown files')
    .option('--name <name>', 'collection name (default: the directory name)')
    .option('--mask <glob>', 'which files to index, relative to the directory', '**/*.md')
    .action(
      run(async (ctx, dir: string, opts: { name?: string; mask?: string }) => {
        const { collectionAdd } = await import('./commands/index-commands.js');
        await collectionAdd(ctx, dir, opts);
      }),
    );
  collection
    .command('list')
    .description('list the collections')
    .option('--json', 'as JSON')
    .action(
      run(async (ctx, opts: { json?: boolean }) => {
        const { collectionList } = await import('./commands/index-commands.js');
        await collectionList(ctx, opts);
      }),
    );
  collection
    .command('remove')
    .description('remove a collection and its documents from the index')
    .argument('<name>', 'collection name')
    .action(
      run(async (ctx, name: string) => {
        const { collectionRemove } = await import('./commands/index-commands.js');
        await collectionRemove(ctx, name);
      }),
    );

  program
    .command('update')
    .description('re-scan every collection: new, changed and deleted files (unchanged ones are skipped)')
    .action(
      run(async (ctx) => {
        const { update } = await import('./commands/index-commands.js');
        await update(ctx);
      }),
    );

  const contexts = program
    .command('context')
    .description('say what the notes in a collection or folder are: returned with results, told to MCP clients');
  contexts
    .command('add')
    .description('set the context of PATH (replacing the one there)')
    .argument('<path>', '/ (everything), a collection, collection/dir, qmd://collection/dir, or a folder on disk')
    .argument('<text...>', 'what is there')
    .action(
      run(async (ctx, place: string, words: string[]) => {
        const { contextAdd } = await import('./commands/context-commands.js');
        await contextAdd(ctx, place, words);
      }),
    );
  contexts
    .command('list')
    .description('list the contexts')
    .option('--json', 'as JSON')
    .action(
      run(async (ctx, opts: { json?: boolean }) => {
        const { contextList } = await import('./commands/context-commands.js');
        await contextList(ctx, opts);
      }),
    );
  contexts
    .command('rm')
    .alias('remove')
    .description('remove the context of PATH')
    .argument('<path>', 'as for add')
    .action(
      run(async (ctx, place: string) => {
        const { contextRemove } = await import('./commands/context-commands.js');
        await contextRemove(ctx, place);
      }),
    );

  const searchCommand = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .argument('<query>', 'what to look for')
      .option('-n <n>', 'number of results', positiveInt('-n'), 10)
      .option('-c, --collection <name>', 'only this collection (repeat or comma-separate)', collect)
      .option(
        '--min-score <score>',
        'drop results weaker than this fraction of the best one (0 to 1; the best scores 1)',
        score,
      )
      .option('--json', 'results as JSON');
  searchCommand('search', 'full-text search (BM25)').action(
    run(async (ctx, query: string, opts: SearchFlags) => {
      const { search } = await import('./commands/read-commands.js');
      await search(ctx, query, opts);
    }),
  );
  searchCommand('query', 'search as the MCP query tool does: hybrid when embeddings exist, else BM25').action(
    run(async (ctx, query: string, opts: SearchFlags) => {
      const { query: runQuery } = await import('./commands/read-commands.js');
      await runQuery(ctx, query, opts);
    }),
  );
  searchCommand('vsearch', 'vector search only (needs qmd embed first)').action(
    run(async (ctx, query: string, opts: SearchFlags) => {
      const { vsearch } = await import('./commands/embed-commands.js');
      await vsearch(ctx, query, opts);
    }),
  );

  program
    .command('embed')
    .description('chunk and embed new and changed notes with the embedding model (resumable)')
    .option('--batch <n>', 'chunks per transaction: a kill loses at most one batch', positiveInt('--batch'))
    .option('--json', 'the report as JSON')
    .action(
      run(async (ctx, opts: { batch?: number; json?: boolean }) => {
        const { embed } = await import('./commands/embed-commands.js');
        await embed(ctx, opts);
      }),
    );

  program
    .command('get')
    .description('print an indexed document (collection/path.md, #docid, a unique path or its end, path:LINE)')
    .argument('<path>', 'collection/relative/path.md, #docid, or anything the MCP get tool takes')
    .option('--from <line>', 'first line (1-based)', positiveInt('--from'))
    .option('-l, --lines <n>', 'number of lines', positiveInt('--lines'))
    .option('--line-numbers', 'prefix each line with its number (12: text)')
    .option('--json', 'as JSON with line numbers')
    .action(
      run(async (ctx, ref: string, opts: GetFlags) => {
        const { get } = await import('./commands/read-commands.js');
        await get(ctx, ref, opts);
      }),
    );

  program
    .command('multi-get')
    .description('print several indexed documents by glob or comma list')
    .argument('<pattern>', 'a glob (notes/*.md; **/*.md in every collection), or a comma list of paths and #docids')
    .option('--max-bytes <n>', 'skip a document larger than this (default 65536)', positiveInt('--max-bytes'))
    .option('-l, --lines <n>', 'at most this many lines of each document', positiveInt('--lines'))
    .option('--line-numbers', 'prefix each line with its number (12: text)')
    .option('--json', 'as JSON')
    .action(
      run(async (ctx, pattern: string, opts: MultiGetFlags) => {
        const { multiGet } = await import('./commands/read-commands.js');
        await multiGet(ctx, pattern, opts);
      }),
    );

  program
    .command('status')
    .description('what is indexed')
    .option('--json', 'as JSON')
    .action(
      run(async (ctx, opts: { json?: boolean }) => {
        const { status } = await import('./commands/read-commands.js');
        await status(ctx, opts);
      }),
    );

  const mcp = program
    .command('mcp')
    .description('run the MCP server over stdio (default) or HTTP')
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .addOption(new Option('--port <port>', 'HTTP port (0: any free one)').argParser(port).default(8181))
    .option('--host <host>', 'HTTP host (loopback by default)', '127.0.0.1')
    .option('--daemon', 'with --http: run in the background and write a pidfile')
    .option('--shared', 'relay to the one warm shared server of this index, starting it if needed (also QMD_SHARED=1)')
    .addOption(new Option('--shared-server', 'run the shared server itself (relays start it)').hideHelp())
    .action(
      run(async (ctx, opts: McpFlags) => {
        const { mcpCommand } = await import('./commands/mcp.js');
        await mcpCommand(ctx, opts);
      }),
    );
  mcp
    .command('stop')
    .description('stop the background HTTP server started with --daemon, or with --shared the shared server')
    .option('--shared', 'stop the shared server of this index')
    .action(
      run(async (ctx, opts: { shared?: boolean }) => {
        const { mcpStop } = await import('./commands/mcp.js');
        await mcpStop(ctx, opts);
      }),
    );

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
        const { lifecycleExport } = await import('./commands/lifecycle.js');
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
        const { lifecycleTrace } = await import('./commands/lifecycle.js');
        await lifecycleTrace(ctx, file, opts);
      }),
    );
  lifecycle
    .command('inspect')
    .description('serve a local endpoint for QMD_INSPECT and a page for Stately’s inspector')
    .addOption(new Option('--port <port>', 'port').argParser(positiveInt('--port')).default(8080))
    .option('--host <host>', 'host', '127.0.0.1')
    .action(
      run(async (ctx, opts: { port: number; host: string }) => {
        const { lifecycleInspect } = await import('./commands/lifecycle.js');
        await lifecycleInspect(ctx, opts);
      }),
    );

  return program;
}

/** Parses and runs; usage errors exit 2, help and version 0. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
      process.exitCode = ok ? 0 : EXIT_USAGE;
      return;
    }
    throw error;
  }
}
