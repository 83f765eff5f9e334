import { Command, CommanderError, Option } from 'commander';
import { GPU_CHOICES } from '../llm/gpu.js';
import { runAction } from './action.js';
import type { GlobalOptions } from './config.js';
import type { CliContext } from './context.js';
import { COMMANDS, type Runner } from './definitions/commands.js';
import { EXIT_USAGE } from './errors.js';
import { packageVersion } from './version.js';

/** The root's options that take a value: their value is not the command's name. */
const VALUED_GLOBALS = new Set(['--index', '--embed-model', '--gpu', '--rerank-model', '--expand-model']);

/**
 * The top-level command `argv` runs (`mcp` in `qmd --index X mcp --http`), or undefined when
 * there is none or it is not one of ours (then every command is defined, so help, "unknown
 * command" and its suggestions read as they always did).
 */
export function selectedCommand(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return undefined;
    if (VALUED_GLOBALS.has(arg)) i++;
    else if (!arg.startsWith('-')) return COMMANDS.some(([name]) => name === arg) ? arg : undefined;
  }
  return undefined;
}

/**
 * The command line. Given `argv`, only the command it runs is defined: commander's work for
 * the other commands cost every start-up CPU (docs/design.md §5, "Start-up"), and none of it
 * is needed to parse one command's options. Without `argv`, all of them (`--help`).
 */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command('qmd')
    .description('Local search for markdown notes, and an MCP server that never outlives its client.')
    .version(packageVersion(), '-V, --version')
    .option(
      '--index <path>',
      'index file, or a name for indexes/NAME.sqlite (default: $QMD_INDEX, $INDEX_PATH, else $XDG_CACHE_HOME/qmd/indexes/index.sqlite)',
    )
    .option('--debug', 'print stack traces with errors')
    .option(
      '--embed-model <model>',
      'embedding model: a .gguf path or an hf: URI (default: $QMD_EMBED_MODEL, else EmbeddingGemma 300M)',
    )
    .addOption(
      new Option(
        '--gpu <backend>',
        'llama.cpp backend: auto tries the GPU, then the CPU (default: $QMD_GPU, else auto)',
      ).choices(GPU_CHOICES),
    )
    .option(
      '--rerank-model <model>',
      'reranking model for query: a .gguf path, an hf: URI, or off (default: $QMD_RERANK_MODEL, else Qwen3 Reranker 0.6B)',
    )
    .option(
      '--expand-model <model>',
      'query expansion model: a .gguf path, an hf: URI, or off (default: $QMD_EXPAND_MODEL, else qmd-query-expansion 1.7B)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const run: Runner =
    <A extends unknown[]>(load: (ctx: CliContext, ...args: A) => Promise<unknown>) =>
    (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      return runAction(command.optsWithGlobals<GlobalOptions>(), (ctx) => load(ctx, ...(args.slice(0, -1) as A)));
    };

  const only = argv === undefined ? undefined : selectedCommand(argv);
  for (const [name, define] of COMMANDS) if (only === undefined || only === name) define(program, run);
  return program;
}

/** Parses and runs; usage errors exit 2, help and version 0. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram(argv);
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
