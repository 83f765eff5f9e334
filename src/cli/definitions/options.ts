import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration, parseWholeNumber } from '../../env.js';
import { OUTPUT_FORMATS } from '../formats/output-format.js';
import { CLIENTS, findClient, type McpClient } from '../mcp-config/clients.js';
import { clientsHelp } from '../mcp-config/help.js';

/** What the commands' options are checked and shaped with, shared by their definitions. */

export function positiveInt(name: string) {
  return (value: string): number => {
    const n = parseWholeNumber(value, 1);
    if (n === undefined) throw new InvalidArgumentError(`${name} must be a whole number ≥ 1.`);
    return n;
  };
}

/** A duration (`30s`, `5m`, `1h`, or milliseconds), for `update --watch --interval`. */
export function duration(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw new InvalidArgumentError('--interval must be a duration such as 30s or 5m (100 ms at least).');
  return ms;
}

/** A TCP port, `min` to 65535. For `qmd mcp --http`, 0 asks the OS for a free one (the one bound is printed). */
export function port(min: 0 | 1) {
  return (value: string): number => {
    const n = parseWholeNumber(value, min, 65535);
    if (n === undefined) throw new InvalidArgumentError(`--port must be ${min} to 65535.`);
    return n;
  };
}

export function score(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('must be a number from 0 to 1.');
  return n;
}

/** `--client`: a client by any of its names; an unknown one is a usage error listing them. */
export function clientName(value: string): McpClient {
  const client = findClient(value);
  if (client === undefined) {
    throw new InvalidArgumentError(`unknown client; one of: ${CLIENTS.map((c) => c.id).join(', ')}.`);
  }
  return client;
}

export const clientsHelpText = (): string => clientsHelp();

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').filter(Boolean)];
}

/** qmd 2.x's output formats: `--format KIND` and its legacy flags (formats/output-format.ts). */
export function withFormats(command: Command): Command {
  return command
    .addOption(new Option('--format <kind>', 'output format').choices(OUTPUT_FORMATS))
    .option('--json', 'as JSON (--format json)')
    .option('--csv', 'as CSV (--format csv)')
    .option('--md', 'as Markdown (--format md)')
    .option('--xml', 'as XML (--format xml)')
    .option('--files', 'docid, score, file and context, one line each (--format files)');
}

export const searchCommand = (program: Command, name: string, description: string) =>
  withFormats(
    program
      .command(name)
      .description(description)
      .argument('<query>', 'what to look for')
      .option('-n <n>', 'number of results (default 5; 20 with --files or --json)', positiveInt('-n'))
      .option('--all', 'every match (at most 1000); pair with --min-score')
      .option('-c, --collection <name>', 'only this collection (repeat or comma-separate)', collect)
      .option('--folder <path>', 'only notes under this folder, relative to the collection root (2024/q1)')
      .option(
        '--min-score <score>',
        'drop results weaker than this fraction of the best one (0 to 1; the best scores 1)',
        score,
      )
      .option('--full', 'the whole document instead of the snippet')
      .option('--line-numbers', 'number the lines of snippets (or documents, with --full)')
      .option('--full-path', 'each result as its file on disk (./… here, else absolute) instead of qmd://')
      .option('--explain', 'how the search ran: the mode, why, each sub-search and how many it ranked'),
  );
