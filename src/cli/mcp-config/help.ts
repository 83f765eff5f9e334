import { CLIENTS } from './clients.js';

const PLATFORMS: ReadonlyArray<readonly [NodeJS.Platform, string]> = [
  ['darwin', 'macOS'],
  ['linux', 'Linux'],
  ['win32', 'Windows'],
];

/**
 * `qmd mcp config --help`'s list: each client and where it reads its servers, on macOS, Linux
 * and Windows (platforms where the places are the same share a line).
 */
export function clientsHelp(): string {
  const lines = ['', 'Clients (--client), and where each reads its servers:'];
  for (const client of CLIENTS) {
    lines.push(`  ${client.id.padEnd(15)}${client.title}`);
    const byPlace = new Map<string, string[]>();
    for (const [platform, name] of PLATFORMS) {
      const places = client.files(platform).join('; or ');
      byPlace.set(places, [...(byPlace.get(places) ?? []), name]);
    }
    for (const [places, names] of byPlace) lines.push(`    ${`${names.join(', ')}:`.padEnd(16)}${places}`);
  }
  lines.push(
    '',
    'It takes qmd mcp’s --shared, --http, --host, --port and --no-auth, and the global --index and',
    '--embed-model: `qmd --index ~/work.sqlite mcp config --client cursor --shared --name work`.',
    'The configuration goes to stdout and runs this Node and this qmd by absolute path, with the',
    'index: a GUI client needs nothing on its PATH. With --http it connects to qmd mcp --http and',
    'carries the bearer token read from INDEX.mcp-token: keep the file it goes into private.',
  );
  return lines.join('\n');
}
