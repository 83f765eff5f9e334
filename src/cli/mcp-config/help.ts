import { CLIENTS } from './clients.js';

/** `--help`'s list: each client and where it reads its servers on this platform. */
export function clientsHelp(platform: NodeJS.Platform = process.platform): string {
  const lines = ['', 'Clients (--client) and where each reads its servers here:'];
  for (const client of CLIENTS) {
    lines.push(`  ${client.id.padEnd(15)}${client.title}: ${client.files(platform).join('; or ')}`);
  }
  lines.push(
    '',
    'The configuration goes to stdout and runs this Node and this qmd by absolute path, with the',
    'index (--index) and, with --shared, the shared server: a GUI client needs nothing on its PATH.',
    'With --http it connects to qmd mcp --http (--host, --port) and carries the bearer token read',
    'from INDEX.mcp-token: keep the file it goes into private.',
  );
  return lines.join('\n');
}
