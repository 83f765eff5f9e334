import type { Command } from 'commander';
import type { MigrateFlags } from '../commands/migrate.js';
import type { GetFlags, MultiGetFlags } from '../commands/read-commands.js';
import type { SearchFlags } from '../commands/search-output.js';
import type { CliContext } from '../context.js';
import { defineDoctor } from './doctor.js';
import { duration, positiveInt, searchCommand, withFormats } from './options.js';
import { defineLifecycle, defineMcp } from './server.js';

/** Wraps a lazily loaded action: builds the context from the command's options, reports errors. */
export type Runner = <A extends unknown[]>(
  load: (ctx: CliContext, ...args: A) => Promise<unknown>,
) => (...args: unknown[]) => Promise<void>;

/** Adds one top-level command (and its sub-commands) to the program. */
export type DefineCommand = (program: Command, run: Runner) => void;

/**
 * Every top-level command, in `--help` order, by name. Each action imports its own module on
 * first use, so `qmd mcp` does not pay for the progress bar, the exporters or the inspector,
 * and `qmd search` does not load the SDK. `buildProgram` defines only the command being run.
 */
export const COMMANDS: ReadonlyArray<readonly [name: string, define: DefineCommand]> = [
  [
    'collection',
    (program, run) => {
      const collection = program.command('collection').description('manage the collections of markdown files');
      collection
        .command('add')
        .description('add a directory as a collection and index it now')
        .argument('<dir>', 'directory of markdown files')
        .option('--name <name>', 'collection name (default: the directory name)')
        .option('--mask <glob>', 'which files to index, relative to the directory; commas separate several', '**/*.md')
        .option('--glob <glob>', 'the same as --mask')
        .action(
          run(async (ctx, dir: string, opts: { name?: string; mask?: string; glob?: string }) => {
            const { collectionAdd } = await import('../commands/index-commands.js');
            const { glob, ...rest } = opts;
            await collectionAdd(ctx, dir, glob === undefined ? rest : { ...rest, mask: glob });
          }),
        );
      collection
        .command('list')
        .description('list the collections')
        .option('--json', 'as JSON')
        .action(
          run(async (ctx, opts: { json?: boolean }) => {
            const { collectionList } = await import('../commands/collection-commands.js');
            await collectionList(ctx, opts);
          }),
        );
      collection
        .command('show')
        .alias('info')
        .description('a collection: its folder, mask, ignores, update command, inclusion, contexts')
        .argument('<name>', 'collection name')
        .option('--json', 'as JSON')
        .action(
          run(async (ctx, name: string, opts: { json?: boolean }) => {
            const { collectionShow } = await import('../commands/collection-commands.js');
            await collectionShow(ctx, name, opts);
          }),
        );
      collection
        .command('remove')
        .alias('rm')
        .description('remove a collection and its documents from the index')
        .argument('<name>', 'collection name')
        .action(
          run(async (ctx, name: string) => {
            const { collectionRemove } = await import('../commands/collection-commands.js');
            await collectionRemove(ctx, name);
          }),
        );
      collection
        .command('rename')
        .alias('mv')
        .description('rename a collection (its documents keep their docids; contexts follow)')
        .argument('<old>', 'its name')
        .argument('<new>', 'the new name')
        .action(
          run(async (ctx, from: string, to: string) => {
            const { collectionRename } = await import('../commands/collection-commands.js');
            await collectionRename(ctx, from, to);
          }),
        );
      for (const [verb, include] of [
        ['include', true],
        ['exclude', false],
      ] as const) {
        collection
          .command(verb)
          .description(
            include
              ? 'search this collection when a search names none (the default)'
              : 'leave this collection out of searches that name none (-c NAME still searches it)',
          )
          .argument('<name>', 'collection name')
          .action(
            run(async (ctx, name: string) => {
              const { collectionInclude } = await import('../commands/collection-commands.js');
              await collectionInclude(ctx, name, include);
            }),
          );
      }
      collection
        .command('set-mask')
        .description('change which files a collection indexes (qmd update then adds and removes files to match)')
        .argument('<name>', 'collection name')
        .argument('<glob>', 'the new mask, relative to its folder; commas separate several')
        .action(
          run(async (ctx, name: string, mask: string) => {
            const { collectionSetMask } = await import('../commands/collection-commands.js');
            await collectionSetMask(ctx, name, mask);
          }),
        );
      collection
        .command('update-cmd')
        .alias('set-update')
        .description('the shell command qmd update runs in the collection folder first (git pull); none clears it')
        .argument('<name>', 'collection name')
        .argument('[command...]', 'the command (quote it, or its words are joined by spaces)')
        .action(
          run(async (ctx, name: string, words: string[]) => {
            const { collectionUpdateCmd } = await import('../commands/collection-commands.js');
            await collectionUpdateCmd(ctx, name, words);
          }),
        );
    },
  ],
  [
    'ls',
    (program, run) => {
      program
        .command('ls')
        .description('the collections, or the documents of one (NAME, NAME/PATH or qmd://NAME/PATH)')
        .argument('[path]', 'a collection, optionally with a folder in it')
        .option('--json', 'as JSON')
        .action(
          run(async (ctx, where: string | undefined, opts: { json?: boolean }) => {
            const { ls } = await import('../commands/ls.js');
            await ls(ctx, where, opts);
          }),
        );
    },
  ],
  [
    'update',
    (program, run) => {
      program
        .command('update')
        .description(
          "run the collections' update commands, then re-scan every collection: new, changed and deleted files",
        )
        .option(
          '--pull',
          'first git pull --ff-only in each collection that is in a git work tree and has no update command',
        )
        .option('--watch', 'then keep the index fresh as notes change, a line per change written, until Ctrl-C')
        .option(
          '--interval <duration>',
          'with --watch: how often a folder that sends no events (a network mount, the OS out of watches) is polled: 30s, 5m (default 10s, longer for a folder whose pass takes over 1/20 of it)',
          duration,
        )
        .action(
          run(async (ctx, opts: { pull?: boolean; watch?: boolean; interval?: number }) => {
            const { update } = await import('../commands/index-commands.js');
            const { interval, ...rest } = opts;
            await update(ctx, { ...rest, ...(interval !== undefined && { intervalMs: interval }) });
          }),
        );
    },
  ],
  [
    'context',
    (program, run) => {
      const contexts = program
        .command('context')
        .description('say what the notes in a collection or folder are: returned with results, told to MCP clients');
      contexts
        .command('add')
        .description('set the context of PATH (replacing the one there); with only TEXT, of the current folder')
        .argument(
          '<path>',
          '/ (everything), a collection, collection/dir, qmd://collection/dir, or a folder on disk; alone, the text',
        )
        .argument('[text...]', 'what is there')
        .action(
          run(async (ctx, place: string, words: string[]) => {
            const { contextAdd } = await import('../commands/context-commands.js');
            // qmd 2.x's `qmd context add "text"`: the current folder's context.
            await (words.length === 0 ? contextAdd(ctx, '.', [place]) : contextAdd(ctx, place, words));
          }),
        );
      contexts
        .command('list')
        .description('list the contexts')
        .option('--json', 'as JSON')
        .action(
          run(async (ctx, opts: { json?: boolean }) => {
            const { contextList } = await import('../commands/context-commands.js');
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
            const { contextRemove } = await import('../commands/context-commands.js');
            await contextRemove(ctx, place);
          }),
        );
    },
  ],
  [
    'migrate',
    (program, run) => {
      program
        .command('migrate')
        .description(
          'build an index from qmd 2.x (@tobilu/qmd): its collections, their settings and contexts; its files stay as they are',
        )
        .option('--from <index>', "qmd 2.x's index (default: where qmd 2.x keeps it)")
        .option('--config <file>', "qmd 2.x's index.yml (default: where qmd 2.x reads it)")
        .option('--dry-run', 'say what would be built, build nothing')
        .action(
          run(async (ctx, opts: MigrateFlags) => {
            const { migrate } = await import('../commands/migrate.js');
            await migrate(ctx, opts, program.opts<{ index?: string }>().index);
          }),
        );
    },
  ],
  [
    'search',
    (program, run) => {
      searchCommand(program, 'search', 'full-text search (BM25)').action(
        run(async (ctx, query: string, opts: SearchFlags) => {
          const { search } = await import('../commands/read-commands.js');
          await search(ctx, query, opts);
        }),
      );
    },
  ],
  [
    'query',
    (program, run) => {
      searchCommand(
        program,
        'query',
        'search as the MCP query tool does: expanded, hybrid when embeddings exist (else BM25), reranked',
      )
        .option(
          '--intent <text>',
          'what the query is about, to tell senses apart (shapes vec searches and the reranker)',
        )
        .option(
          '-C, --candidate-limit <n>',
          'fused candidates the reranker reads (default 40)',
          positiveInt('--candidate-limit'),
        )
        .option('--no-rerank', 'skip the reranker: the fusion’s order (RRF only, faster on a CPU)')
        .option('--no-expand', 'skip the query expansion model: only the query’s own lex and vec searches')
        .action(
          run(async (ctx, query: string, opts: SearchFlags) => {
            const { query: runQuery } = await import('../commands/read-commands.js');
            await runQuery(ctx, query, opts);
          }),
        );
    },
  ],
  [
    'vsearch',
    (program, run) => {
      searchCommand(program, 'vsearch', 'vector search only (needs qmd embed first)').action(
        run(async (ctx, query: string, opts: SearchFlags) => {
          const { vsearch } = await import('../commands/embed-commands.js');
          await vsearch(ctx, query, opts);
        }),
      );
    },
  ],
  [
    'embed',
    (program, run) => {
      program
        .command('embed')
        .description('chunk and embed new and changed notes with the embedding model (resumable)')
        .option('--batch <n>', 'chunks per transaction: a kill loses at most one batch', positiveInt('--batch'))
        .option('-f, --force', 'embed everything again (after changing the model file)')
        .option('--json', 'the report as JSON')
        .action(
          run(async (ctx, opts: { batch?: number; force?: boolean; json?: boolean }) => {
            const { embed } = await import('../commands/embed-commands.js');
            await embed(ctx, opts);
          }),
        );
    },
  ],
  [
    'pull',
    (program, run) => {
      program
        .command('pull')
        .description('download the embedding, reranking and query expansion models (searches never download)')
        .option('--refresh', 'download them again even when cached (each replaces its file once whole)')
        .action(
          run(async (ctx, opts: { refresh?: boolean }) => {
            const { pull } = await import('../commands/pull.js');
            await pull(ctx, opts);
          }),
        );
    },
  ],
  [
    'get',
    (program, run) => {
      program
        .command('get')
        .description('print an indexed document (collection/path.md, #docid, a unique path or its end, path:LINE)')
        .argument('<path>', 'collection/relative/path.md, #docid, or anything the MCP get tool takes')
        .option('--from <line>', 'first line (1-based)', positiveInt('--from'))
        .option('-l, --lines <n>', 'number of lines', positiveInt('--lines'))
        .option('--line-numbers', 'prefix each line with its number (12: text)')
        .option('--no-line-numbers', "the text as indexed (the default here; qmd 2.x's default is numbered)")
        .option('--full', 'the whole document (the default unless a range is given)')
        .option('--json', 'as JSON with line numbers')
        .action(
          run(async (ctx, ref: string, opts: GetFlags) => {
            const { get } = await import('../commands/read-commands.js');
            await get(ctx, ref, opts);
          }),
        );
    },
  ],
  [
    'multi-get',
    (program, run) => {
      withFormats(
        program
          .command('multi-get')
          .description('print several indexed documents by glob or comma list')
          .argument(
            '<pattern>',
            'a glob (notes/*.md; **/*.md in every collection), or a comma list of paths and #docids',
          )
          .option('--max-bytes <n>', 'skip a document larger than this (default 65536)', positiveInt('--max-bytes'))
          .option('-l, --lines <n>', 'at most this many lines of each document', positiveInt('--lines'))
          .option('--line-numbers', 'prefix each line with its number (12: text)')
          .option('--no-line-numbers', "the text as indexed (the default here; qmd 2.x's default is numbered)"),
      ).action(
        run(async (ctx, pattern: string, opts: MultiGetFlags) => {
          const { multiGet } = await import('../commands/read-commands.js');
          await multiGet(ctx, pattern, opts);
        }),
      );
    },
  ],
  [
    'cleanup',
    (program, run) => {
      program
        .command('cleanup')
        .description('remove what nothing uses any more, compact the full-text index, VACUUM the file')
        .option('--dry-run', 'say what would go, change nothing')
        .action(
          run(async (ctx, opts: { dryRun?: boolean }) => {
            const { cleanup } = await import('../commands/maintenance-commands.js');
            await cleanup(ctx, opts);
          }),
        );
    },
  ],
  [
    'status',
    (program, run) => {
      program
        .command('status')
        .description('what is indexed')
        .option('--json', 'as JSON')
        .action(
          run(async (ctx, opts: { json?: boolean }) => {
            const { status } = await import('../commands/read-commands.js');
            await status(ctx, opts);
          }),
        );
    },
  ],
  ['doctor', defineDoctor],
  ['mcp', defineMcp],
  ['lifecycle', defineLifecycle],
];
