import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TMP } from '../lib/paths.js';
import { mulberry32, sourceParagraphs } from '../scale/corpus.js';

/** Notes per leaf folder: 10k notes make 1,000 folders, 100k make 10,000 (thousands of folders). */
export const PER_FOLDER = 10;

/**
 * The watch benchmark's corpus: `notes` notes of real prose (the scale corpus's paragraphs,
 * bench/scale/corpus.ts), about 1 KB each, `PER_FOLDER` to a leaf folder in a two-level tree
 * (`p017/f1734/n17345.md`), generated once into bench/.tmp/watch-N/notes.
 */
export function watchCorpus(notes: number, log: (line: string) => void): { dir: string; root: string } {
  const dir = join(TMP, `watch-${notes}`);
  const root = join(dir, 'notes');
  const done = join(dir, 'corpus.done');
  if (existsSync(done)) return { dir, root };
  const { paragraphs } = sourceParagraphs();
  const random = mulberry32(41);
  const folders = Math.ceil(notes / PER_FOLDER);
  const fanout = Math.ceil(Math.sqrt(folders));
  log(`watch corpus: ${notes} notes in ${folders} folders`);
  for (let n = 0; n < notes; n++) {
    const folder = noteFolder(root, n, fanout);
    if (n % PER_FOLDER === 0) mkdirSync(folder, { recursive: true });
    let text = `# Note ${n}\n\n`;
    while (text.length < 1000) text += `${paragraphs[Math.floor(random() * paragraphs.length)]}\n\n`;
    writeFileSync(join(folder, `n${n}.md`), text);
  }
  writeFileSync(done, '');
  return { dir, root };
}

export function noteFolder(root: string, n: number, fanout: number): string {
  const f = Math.floor(n / PER_FOLDER);
  return join(root, `p${String(Math.floor(f / fanout)).padStart(3, '0')}`, `f${f}`);
}
