import { describe, expect, it } from 'vitest';
import { CLIENTS, findClient, type Launch } from '../../src/cli/mcp-config/clients.js';
import { clientsHelp } from '../../src/cli/mcp-config/help.js';
import { READERS } from '../support/mcp-clients.js';

/** Paths a config must carry through unharmed: spaces, quotes, backslashes, non-ASCII, a DEL. */
const STDIO: Launch = {
  transport: 'stdio',
  command: 'C:\\Program Files\\nodejs\\node.exe',
  args: ['/home/zoë/My "Apps"/qmd/dist/qmd.mjs', '--index', "/home/zoë/it's\u007f/index.sqlite", 'mcp', '--shared'],
  env: { XDG_CACHE_HOME: '/home/zoë/.cache' },
};
const HTTP: Launch = {
  transport: 'http',
  url: 'http://127.0.0.1:8181/mcp',
  headers: { Authorization: 'Bearer abcDEF_0123456789-abcdefghijklmnopqrstuvw' },
};

describe('qmd mcp config: each client’s configuration', () => {
  it('covers the seven clients of issue 32, each with a reader written from its documentation', () => {
    expect(CLIENTS.map((c) => c.id)).toEqual([
      'claude-desktop',
      'claude-code',
      'cursor',
      'vscode',
      'gemini-cli',
      'codex',
      'opencode',
    ]);
    for (const client of CLIENTS) expect(READERS[client.id], client.id).toBeDefined();
  });

  it.each(CLIENTS.map((c) => [c.id, c] as const))('%s: stdio reads back exactly, under any name', (id, client) => {
    for (const name of ['qmd', 'qmd-work', 'notes.2026']) {
      expect(READERS[id]?.(client.render(name, STDIO), name)).toEqual(STDIO);
    }
  });

  it.each(CLIENTS.filter((c) => c.id !== 'claude-desktop').map((c) => [c.id, c] as const))(
    '%s: HTTP reads back exactly, with the bearer header or with none',
    (id, client) => {
      expect(READERS[id]?.(client.render('qmd', HTTP), 'qmd')).toEqual(HTTP);
      const open: Launch = { ...HTTP, headers: {} };
      expect(READERS[id]?.(client.render('qmd', open), 'qmd')).toEqual(open);
    },
  );

  it('an empty environment is left out, not written as {}', () => {
    const bare: Launch = { ...STDIO, env: {} };
    for (const client of CLIENTS) {
      const text = client.render('qmd', bare);
      expect(text, client.id).not.toMatch(/"env"|"environment"|\.env\]/);
      expect(READERS[client.id]?.(text, 'qmd')).toEqual(bare);
    }
  });

  it('Claude Desktop refuses HTTP with one line that says what to use instead', () => {
    const desktop = findClient('claude-desktop');
    expect(() => desktop?.render('qmd', HTTP)).toThrow(/stdio only.*--shared for one warm server/);
  });

  it('finds a client by any of its names', () => {
    expect(findClient('Claude Desktop')?.id).toBe('claude-desktop');
    expect(findClient('claude')?.id).toBe('claude-code');
    expect(findClient('VS Code')?.id).toBe('vscode');
    expect(findClient('gemini')?.id).toBe('gemini-cli');
    expect(findClient('OpenCode')?.id).toBe('opencode');
    expect(findClient('emacs')).toBeUndefined();
  });

  it('says where each client reads its servers, on Linux, macOS and Windows', () => {
    const expected: Record<string, Record<string, string>> = {
      'claude-desktop': {
        darwin: '~/Library/Application Support/Claude/claude_desktop_config.json',
        win32: '%APPDATA%\\Claude\\claude_desktop_config.json',
        linux: '~/.config/Claude/claude_desktop_config.json',
      },
      'claude-code': { darwin: '~/.claude.json', win32: '%USERPROFILE%\\.claude.json', linux: '~/.claude.json' },
      cursor: { darwin: '~/.cursor/mcp.json', win32: '%USERPROFILE%\\.cursor\\mcp.json', linux: '~/.cursor/mcp.json' },
      vscode: {
        darwin: '~/Library/Application Support/Code/User/mcp.json',
        win32: '%APPDATA%\\Code\\User\\mcp.json',
        linux: '~/.config/Code/User/mcp.json',
      },
      'gemini-cli': {
        darwin: '~/.gemini/settings.json',
        win32: '%USERPROFILE%\\.gemini\\settings.json',
        linux: '~/.gemini/settings.json',
      },
      codex: {
        darwin: '~/.codex/config.toml',
        win32: '%USERPROFILE%\\.codex\\config.toml',
        linux: '~/.codex/config.toml',
      },
      opencode: {
        darwin: '~/.config/opencode/opencode.json',
        win32: '%USERPROFILE%\\.config\\opencode\\opencode.json',
        linux: '~/.config/opencode/opencode.json',
      },
    };
    for (const client of CLIENTS) {
      for (const platform of ['darwin', 'win32', 'linux'] as const) {
        expect(client.files(platform)[0], `${client.id} on ${platform}`).toContain(expected[client.id]?.[platform]);
      }
    }
    const help = clientsHelp();
    for (const client of CLIENTS) {
      expect(help).toContain(client.id);
      for (const platform of ['darwin', 'win32', 'linux'] as const)
        expect(help).toContain(expected[client.id]?.[platform]);
    }
  });
});
