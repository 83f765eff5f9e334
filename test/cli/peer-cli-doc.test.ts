/**
 * docs/peer-cli.md stays true: each row of its tables against qmd's command line as commander
 * defines it (`buildProgram()`, every command) and against the variables `src/` reads. A row
 * names the peer's command and flags in code spans (`collection add <path> [--name]`, `-c,
 * --collection <name>`, `QMD_RERANK_MODEL`); its second cell says what ours does:
 * - same, ours: the command exists, with every flag the row names; a variable is read;
 * - differs: the command (or the first flag) exists; the rest is the notes' to explain;
 * - no: the command does not exist, or, when the row names a command of ours with flags, those
 *   flags do not; a variable is not read.
 * Then the other way: every command, sub-command and visible option of ours has a row.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const doc = readFileSync(join(ROOT, 'docs/peer-cli.md'), 'utf8');
const program = buildProgram();

interface Row {
  section: string;
  peer: string;
  ours: string;
}

/** The rows of every table under a `## ` heading, whose second column is `ours`. */
function rows(): Row[] {
  const found: Row[] = [];
  let section = '';
  let inTable = false;
  for (const line of doc.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    if (cells[1] === 'ours' && cells[0] === 'qmd 2.8.3') {
      inTable = true;
      continue;
    }
    if (!inTable || /^-+$/.test(cells[0] ?? '')) continue;
    found.push({ section, peer: cells[0] ?? '', ours: cells[1] ?? '' });
  }
  return found;
}

/** One code span of a row's first cell: the command words it names and the flags after them. */
interface Span {
  words: string[];
  flags: string[];
  variables: string[];
}

/** `collection add <path> [--name] [--mask|--glob]` → words [collection, add], flags [--name, --mask, --glob]. */
function spans(row: Row): Span[] {
  const codes = [...row.peer.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  const out: Span[] = [];
  let words: string[] = [];
  for (const code of codes) {
    const leading: string[] = [];
    for (const token of code.split(/\s+/).filter(Boolean)) {
      // An argument (`<name>`, `[path]`, `"text"`, `'lex:…'`) or a flag ends the command's words.
      if (/^[<['"-]/.test(token) || token.includes(':') || token.includes('…')) break;
      leading.push(token);
    }
    const flags = [...code.matchAll(/(?<![\w-])(--?[A-Za-z][\w-]*)/g)].map((m) => m[1] as string);
    if (leading.length === 1 && /^[A-Z][A-Z0-9_]+$/.test(leading[0] as string)) {
      out.push({ words: [], flags: [], variables: [leading[0] as string] });
      continue;
    }
    // A span that starts with a flag belongs to the command of the span before it in the cell
    // (`multi-get --format …`, `--json`), or to the section's commands.
    if (leading.length > 0) words = leading;
    out.push({ words, flags, variables: [] });
  }
  return out;
}

/** Every command by its path, aliases included: `collection rm` → the remove command. */
function commandAt(words: readonly string[]): Command | undefined {
  let at: Command = program;
  for (const word of words) {
    const next = at.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) return undefined;
    at = next;
  }
  return at;
}

/** The command paths a span names: `collection include|exclude` is two; none is the section's. */
function targetsOf(span: Span, section: string): string[][] {
  if (span.words.length === 0) return SECTION_COMMANDS[section] ?? [[]];
  return span.words.reduce<string[][]>(
    (paths, word) => paths.flatMap((path) => word.split('|').map((w) => [...path, w])),
    [[]],
  );
}

function hasFlag(command: Command, flag: string): boolean {
  // Commander's own, on every command.
  if (flag === '--help' || flag === '-h') return true;
  const options = [...command.options, ...(command === program ? [] : program.options)];
  return options.some((o) => o.long === flag || o.short === flag);
}

/** The commands a flag-only row of a section applies to. */
const SECTION_COMMANDS: Record<string, string[][]> = {
  'Flags of search, query and vsearch': [['search'], ['query'], ['vsearch']],
  'Global flags and variables': [[]],
  Commands: [[]],
  'Commands only in ours': [[]],
};

const source = (() => {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) texts.push(readFileSync(path, 'utf8'));
    }
  };
  walk(join(ROOT, 'src'));
  return texts.join('\n');
})();
const reads = (variable: string) => new RegExp(`\\b${variable}\\b`).test(source);

const ROWS = rows();

describe('docs/peer-cli.md against the command line', () => {
  it('has the tables it describes', () => {
    expect(new Set(ROWS.map((r) => r.section))).toEqual(
      new Set([
        'Commands',
        'Commands only in ours',
        'Flags of search, query and vsearch',
        'Flags of get and multi-get',
        'Global flags and variables',
      ]),
    );
    expect(ROWS.length).toBeGreaterThan(80);
    for (const row of ROWS) expect(['same', 'differs', 'no', 'ours'], row.peer).toContain(row.ours);
  });

  it.each(ROWS.map((row) => [`${row.section}: ${row.peer.slice(0, 70)} (${row.ours})`, row] as const))(
    '%s',
    (_title, row) => {
      // A row that differs answers for its first name; the notes explain the rest.
      const checked = row.ours === 'differs' ? spans(row).slice(0, 1) : spans(row);
      for (const span of checked) {
        for (const variable of span.variables) {
          if (row.ours === 'same' || row.ours === 'ours') expect(reads(variable), `${variable} is read`).toBe(true);
          if (row.ours === 'no') expect(reads(variable), `${variable} is not read`).toBe(false);
        }
        if (span.variables.length > 0) continue;
        const targets = targetsOf(span, row.section);
        const commands = targets.map(commandAt);
        const found = commands.filter((c): c is Command => c !== undefined);
        if (row.ours === 'no') {
          // A command of ours named with flags ours lacks (`embed -c`), or a command ours lacks.
          if (span.flags.length === 0) expect(found, `${span.words.join(' ')} does not exist`).toEqual([]);
          else
            for (const flag of span.flags)
              expect(
                found.some((c) => hasFlag(c, flag)),
                `${flag} does not exist`,
              ).toBe(false);
          continue;
        }
        if (span.words.length > 0 && row.ours === 'differs') {
          expect(commandAt(targets[0]?.slice(0, 1) ?? []), `${span.words[0]} exists`).toBeDefined();
          continue;
        }
        expect(found.length, `${span.words.join(' ')} exists`).toBeGreaterThan(0);
        const flags = row.ours === 'differs' ? span.flags.slice(0, 1) : span.flags;
        for (const flag of flags)
          expect(
            found.some((c) => hasFlag(c, flag)),
            `${flag} exists`,
          ).toBe(true);
      }
    },
  );
});

describe('every command and option of ours has its row in docs/peer-cli.md', () => {
  /** What the rows name: each command path, and each flag with the command it was named for. */
  const named = new Set<string>();
  for (const row of ROWS) {
    if (row.ours === 'no') continue;
    for (const span of spans(row)) {
      for (const words of targetsOf(span, row.section)) {
        const command = commandAt(words);
        if (command === undefined) continue;
        named.add(pathOf(command));
        for (const flag of span.flags) named.add(`${pathOf(command)} ${flag}`);
      }
    }
  }

  function pathOf(command: Command): string {
    const names: string[] = [];
    for (let c: Command | null = command; c !== null && c !== program; c = c.parent) names.unshift(c.name());
    return names.join(' ');
  }

  const all: Command[] = [];
  const walk = (command: Command) => {
    for (const sub of command.commands) {
      all.push(sub);
      walk(sub);
    }
  };
  walk(program);

  it.each(all.map((command) => [pathOf(command), command] as const))('%s', (path, command) => {
    const parentOnly = command.commands.length > 0 && command.options.length === 0;
    if (!parentOnly) expect(named.has(path), `a row for ${path}`).toBe(true);
    for (const option of command.options) {
      if (option.hidden) continue;
      const flags = [option.long, option.short].filter((f): f is string => f !== undefined);
      expect(
        flags.some((f) => named.has(`${path} ${f}`) || named.has(` ${f}`)),
        `a row for ${path} ${flags.join(', ')}`,
      ).toBe(true);
    }
  });

  it('the root’s options', () => {
    for (const option of program.options) {
      if (option.long === '--version') continue;
      expect(named.has(` ${option.long}`), `a row for ${option.long}`).toBe(true);
    }
  });
});
