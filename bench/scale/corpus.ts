import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, TMP } from '../lib/paths.js';

/**
 * Scaled corpora of real prose: the paragraphs of every markdown file the installed packages
 * ship (`node_modules/**\/*.md`, ~4 MB here: READMEs, changelogs, docs), recombined into
 * notes of about `noteBytes` with a seeded PRNG, so the same lockfile and seed give the same
 * bytes. Nothing is downloaded. Notes are spread over `collections` roots (`c0`, `c1`, …),
 * each with nested folders of 500 notes, so a collection filter selects 1/collections of them.
 */
export interface ScaleCorpus {
  /** The parent of the collection roots. */
  dir: string;
  notes: number;
  collections: string[];
  bytes: number;
  /** Query words: frequent, middling and rare words of the source paragraphs. */
  queries: { common: string[]; middle: string[]; rare: string[] };
  /** Source paragraphs and the files they came from. */
  paragraphs: number;
  sources: number;
}

const SEED = 26;
const NOTE_BYTES = 3000;
const COLLECTIONS = 4;
const PER_FOLDER = 500;

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every `.md` under node_modules over 1 KB, sorted, as paragraphs (blank-line separated, 80–1200 chars). */
export function sourceParagraphs(): { paragraphs: string[]; headings: string[]; sources: number } {
  const files: string[] = [];
  const walk = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry);
      let stat: ReturnType<typeof statSync>;
      try {
        stat = statSync(full);
      } catch {
        continue;
      }
      if (stat.isDirectory()) walk(full);
      else if (entry.toLowerCase().endsWith('.md') && stat.size > 1024) files.push(full);
    }
  };
  walk(join(ROOT, 'node_modules'));
  const paragraphs: string[] = [];
  const headings: string[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/\r\n/g, '\n');
    for (const block of text.split(/\n\s*\n/)) {
      const trimmed = block.trim();
      const heading = /^#{1,3} (.{4,70})$/.exec(trimmed);
      if (heading?.[1] !== undefined) {
        headings.push(heading[1]);
        continue;
      }
      if (trimmed.length < 80 || trimmed.length > 1200 || seen.has(trimmed)) continue;
      // Badges, tables of links and HTML blocks are not prose.
      if (/^(\[!\[|<|\|)/.test(trimmed)) continue;
      seen.add(trimmed);
      paragraphs.push(trimmed);
    }
  }
  return { paragraphs, headings, sources: files.length };
}

/** Words of 4+ letters ranked by how many paragraphs contain them. */
function queryWords(paragraphs: readonly string[]): ScaleCorpus['queries'] {
  const df = new Map<string, number>();
  for (const p of paragraphs) {
    for (const word of new Set(p.toLowerCase().match(/\b[a-z]{4,12}\b/g) ?? [])) df.set(word, (df.get(word) ?? 0) + 1);
  }
  const ranked = [...df.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const stop = new Set(
    'this that with from have will your when which their there they what then than also into more been were only used uses'.split(
      ' ',
    ),
  );
  const words = ranked.filter((w) => !stop.has(w));
  const pick = (from: number, n: number) => words.slice(from, from + n);
  const rareStart = words.findIndex((w) => (df.get(w) ?? 0) <= 3);
  return { common: pick(0, 8), middle: pick(400, 8), rare: pick(Math.max(0, rareStart), 8) };
}

export function scaleCorpusDir(notes: number): string {
  return join(TMP, `scale-${notes}-s${SEED}`);
}

/**
 * The corpus of `notes` notes, generated once into `bench/.tmp/scale-N-s26/` and reused
 * (`meta.json` is written last: an interrupted generation starts over).
 */
export function scaleCorpus(notes: number, log: (line: string) => void = () => {}): ScaleCorpus {
  const root = scaleCorpusDir(notes);
  const meta = join(root, 'meta.json');
  if (existsSync(meta)) return JSON.parse(readFileSync(meta, 'utf8')) as ScaleCorpus;
  rmSync(root, { recursive: true, force: true });
  const { paragraphs, headings, sources } = sourceParagraphs();
  log(`scale corpus: ${paragraphs.length} paragraphs from ${sources} files; writing ${notes} notes`);
  const random = mulberry32(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const collections = Array.from({ length: COLLECTIONS }, (_, i) => `c${i}`);
  let bytes = 0;
  const started = Date.now();
  for (let n = 0; n < notes; n++) {
    const index = Math.floor(n / COLLECTIONS);
    const folder = noteFolder(root, n);
    if (index % PER_FOLDER === 0) mkdirSync(folder, { recursive: true });
    const parts = [
      `---\ntags: [${pick(headings).toLowerCase().split(/\W+/).filter(Boolean).slice(0, 2).join(', ')}]\n---\n`,
      `# ${pick(headings)}\n`,
    ];
    let size = parts[0]!.length + parts[1]!.length;
    while (size < NOTE_BYTES) {
      if (random() < 0.2) {
        const h = `## ${pick(headings)}\n`;
        parts.push(h);
        size += h.length + 1;
      }
      const p = `${pick(paragraphs)}\n`;
      parts.push(p);
      size += p.length + 1;
    }
    const text = parts.join('\n');
    const fd = openSync(join(folder, noteName(n)), 'w');
    writeSync(fd, text);
    closeSync(fd);
    bytes += Buffer.byteLength(text);
    if (n > 0 && n % 100_000 === 0) log(`scale corpus: ${n} notes (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  const corpus: ScaleCorpus = {
    dir: root,
    notes,
    collections,
    bytes,
    queries: queryWords(paragraphs),
    paragraphs: paragraphs.length,
    sources,
  };
  writeFileSync(meta, JSON.stringify(corpus));
  return corpus;
}

function noteFolder(root: string, n: number): string {
  const index = Math.floor(n / COLLECTIONS);
  return join(root, `c${n % COLLECTIONS}`, `f${String(Math.floor(index / PER_FOLDER)).padStart(4, '0')}`);
}

function noteName(n: number): string {
  return `n${String(n).padStart(7, '0')}.md`;
}

/** The file of note `n` (0 ≤ n < corpus.notes). */
export function notePath(corpus: ScaleCorpus, n: number): string {
  return join(noteFolder(corpus.dir, n), noteName(n));
}

/** Where a collection's notes are. */
export function collectionRoot(corpus: ScaleCorpus, collection: string): string {
  return join(corpus.dir, collection);
}

export function describeCorpus(corpus: ScaleCorpus): string {
  return `${corpus.notes.toLocaleString('en-US')} notes, ${(corpus.bytes / 2 ** 20).toFixed(0)} MiB in ${corpus.collections.length} collections (${relative(ROOT, corpus.dir)}), recombined from ${corpus.paragraphs.toLocaleString('en-US')} paragraphs of ${corpus.sources} markdown files in node_modules`;
}
