import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { parse, stringify } from 'yaml';
import { runPeer, sharedHome } from './peer.js';

/**
 * Notes in three collections, with what qmd 2.x treats specially: nested folders, a folder its
 * `ignore:` leaves out (`notes/archive`), one it never indexes (`notes/build`), a hidden one, a
 * file no mask takes, and a comma-separated mask (`wiki`: `pages/*.md,index.md`). Rare words
 * (zephyrine, quokka, lantern) give searches a known answer.
 */
export const PEER_NOTES: Record<string, string> = {
  'notes/sqlite.md': '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\nCheckpoint on close.\n',
  'notes/journal/2025-05-01.md': '# Journal May 1\n\nBaked sourdough bread today. The starter was lively.\n',
  'notes/journal/2025-05-02.md': '# Journal May 2\n\nThe sourdough starter needs feeding twice a day.\n',
  'notes/work/meetings/standup.md':
    '# Standup\n\nDiscussed the index checkpoint and WAL growth.\nThe zephyrine deadline moved.\n',
  'notes/work/roadmap.md': '# Roadmap\n\nZephyrine ships in June; the quokka migration follows.\n',
  'notes/archive/old.md': '# Old plans\n\nQuokka was the codename before zephyrine.\n',
  'notes/build/generated.md': '# Generated\n\nQuokka build output.\n',
  'notes/.hidden/secret.md': '# Secret\n\nQuokka in a hidden folder.\n',
  'notes/readme.txt': 'Not markdown: quokka.\n',
  'docs/api.md':
    '# API reference\n\nThe search endpoint returns ranked documents. Authentication uses a bearer token.\n',
  'docs/guide.md': '# Guide\n\nHow to install and configure the search server. Zephyrine integration is optional.\n',
  'docs/howto/deploy.md': '# Deploying\n\nRun the server behind a proxy; the bearer token goes in a header.\n',
  'wiki/index.md': '# Wiki\n\nStart here. Lanterns light the way.\n',
  'wiki/pages/lanterns.md': '# Lanterns\n\nPaper lanterns and the lantern festival.\n',
  'wiki/pages/tea.md': '# Tea\n\nGreen tea, black tea and a lantern by the window.\n',
  'wiki/pages/deep/skipped.md': '# Deep\n\nA lantern one folder too deep for pages/*.md.\n',
  'wiki/other.md': '# Other\n\nNo mask takes this lantern.\n',
};

/** The contexts set with the peer's CLI (`context add`), as `qmd context list --json` shows places here. */
export const PEER_CONTEXTS = [
  { place: '/', text: 'Knowledge base of a small team' },
  { place: 'notes', text: 'Personal notes' },
  { place: 'notes/work', text: 'Work notes and meetings' },
  { place: 'docs', text: 'Product documentation' },
];

/**
 * A home where qmd 2.8.3 has indexed `PEER_NOTES` as a person would set it up: collections
 * with masks, contexts, a global context, an update command, an excluded collection, and an
 * `ignore:` written into its `index.yml` by hand (no command sets it), then `qmd update`.
 */
export async function peerIndexedHome(dir: string) {
  const home = sharedHome(dir);
  const root = join(dir, 'corpus');
  for (const [file, text] of Object.entries(PEER_NOTES)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  const peer = async (...args: string[]) => {
    const run = await runPeer(args, home.env, root);
    expect(run.code, `qmd 2.8.3 ${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run.stdout;
  };
  await peer('collection', 'add', join(root, 'notes'), '--name', 'notes');
  await peer('collection', 'add', join(root, 'docs'), '--name', 'docs');
  await peer('collection', 'add', join(root, 'wiki'), '--name', 'wiki', '--mask', 'pages/*.md,index.md');
  await peer('context', 'add', '/', PEER_CONTEXTS[0]?.text as string);
  await peer('context', 'add', 'qmd://notes', PEER_CONTEXTS[1]?.text as string);
  await peer('context', 'add', 'qmd://notes/work', PEER_CONTEXTS[2]?.text as string);
  await peer('context', 'add', 'qmd://docs', PEER_CONTEXTS[3]?.text as string);
  await peer('collection', 'update-cmd', 'docs', 'echo pulled');
  await peer('collection', 'exclude', 'wiki');
  const config = parse(readFileSync(home.peerConfig, 'utf8')) as { collections: Record<string, { ignore?: string[] }> };
  (config.collections.notes as { ignore?: string[] }).ignore = ['archive/**'];
  writeFileSync(home.peerConfig, stringify(config));
  await peer('update');
  return { ...home, root, peer };
}
