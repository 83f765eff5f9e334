import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/definitions/commands.js';
import { fastPath, fastPathArgs, fastPathFlags } from '../../src/cli/fast-path.js';
import { buildProgram, selectedCommand } from '../../src/cli/program.js';
import { MCP_DEFAULTS } from '../../src/serve/mcp.js';

const argv = (...args: string[]) => ['node', 'qmd', ...args];
const defined = (args?: string[]) => buildProgram(args && argv(...args)).commands.map((c) => c.name());

describe('selectedCommand', () => {
  it('finds the command after the root options, skipping the values of --index and --embed-model', () => {
    expect(selectedCommand(argv('mcp'))).toBe('mcp');
    expect(selectedCommand(argv('--index', 'mcp', 'status'))).toBe('status');
    expect(selectedCommand(argv('--embed-model', 'search', '--debug', 'query', 'x'))).toBe('query');
    expect(selectedCommand(argv('--gpu', 'off', '--rerank-model', 'off', '--expand-model', 'status', 'query'))).toBe(
      'query',
    );
    expect(selectedCommand(argv('--index=/tmp/i.sqlite', 'mcp', '--http'))).toBe('mcp');
    expect(selectedCommand(argv('multi-get', 'a,b'))).toBe('multi-get');
  });

  it('is undefined without a command of ours: help, version, a typo, or after --', () => {
    expect(selectedCommand(argv())).toBeUndefined();
    expect(selectedCommand(argv('--help'))).toBeUndefined();
    expect(selectedCommand(argv('-V'))).toBeUndefined();
    expect(selectedCommand(argv('help', 'mcp'))).toBeUndefined();
    expect(selectedCommand(argv('serch', 'x'))).toBeUndefined();
    expect(selectedCommand(argv('--', 'mcp'))).toBeUndefined();
  });
});

describe('buildProgram', () => {
  it('defines only the command being run', () => {
    expect(defined(['mcp'])).toEqual(['mcp']);
    expect(defined(['--index', '/tmp/i.sqlite', 'collection', 'add', '.'])).toEqual(['collection']);
  });

  it('defines every command, in order, when none is selected (help and "did you mean")', () => {
    const all = COMMANDS.map(([name]) => name);
    expect(defined()).toEqual(all);
    expect(defined(['serch', 'x'])).toEqual(all);
    expect(all).toEqual([
      'collection',
      'ls',
      'update',
      'context',
      'migrate',
      'search',
      'query',
      'vsearch',
      'embed',
      'pull',
      'get',
      'multi-get',
      'cleanup',
      'status',
      'doctor',
      'mcp',
      'lifecycle',
    ]);
  });

  it("parses mcp's options alone as it does among all the commands", async () => {
    const args = argv('--index', '/tmp/i.sqlite', 'mcp', '--http', '--port', '0');
    const alone = await parsedBy(buildProgram(args), args);
    expect(alone).toEqual({
      command: 'mcp',
      options: { index: '/tmp/i.sqlite', http: true, port: 0, host: '127.0.0.1', auth: true, watch: true },
    });
    expect(alone).toEqual(await parsedBy(buildProgram(), args));
  });
});

/** What commander would run for `args`: the action's command and its options, root's included. */
async function parsedBy(program: ReturnType<typeof buildProgram>, args: string[]) {
  let seen: { command: string; options: Record<string, unknown> } | undefined;
  program.hook('preAction', (_root, action) => {
    seen = { command: action.name(), options: action.optsWithGlobals() };
    throw new Error('parsed, not run');
  });
  await expect(program.parseAsync(args)).rejects.toThrow('parsed, not run');
  return seen;
}

describe('fastPath', () => {
  it('skips commander for `qmd mcp` and `qmd mcp --shared` exactly, and for nothing else', () => {
    expect(fastPathArgs()).toEqual([['mcp'], ['mcp', '--shared']]);
    expect(fastPath(argv('mcp'))).toBeTypeOf('function');
    expect(fastPath(argv('mcp', '--shared'))).toBeTypeOf('function');
    for (const other of [
      [],
      ['mcp', '--http'],
      ['--index', 'x', 'mcp'],
      ['mcp', '--debug'],
      ['status'],
      ['mcp', 'stop'],
      ['mcp', '--shared', '--http'],
      ['--index', 'x', 'mcp', '--shared'],
    ]) {
      expect(fastPath(argv(...other)), other.join(' ')).toBeUndefined();
    }
  });

  it('runs what commander runs for its command line: mcp with no root options, the same flags', async () => {
    // Each fast path calls runMcp(fastPathFlags(args)): mcpCommand with a context from no root options.
    for (const args of fastPathArgs()) {
      expect(await parsedBy(buildProgram(argv(...args)), argv(...args))).toEqual({
        command: 'mcp',
        options: fastPathFlags(args),
      });
    }
    expect(fastPathFlags(['mcp'])).toEqual(MCP_DEFAULTS);
  });
});
