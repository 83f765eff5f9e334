import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A deterministic corpus of markdown notes for tests and benchmarks: the same `seed` and
 * `files` always give the same bytes. Notes look like real ones where it matters to an
 * index: a heading (about 1 in 10 has none, so its title falls back to the file name), some
 * YAML front matter, sections with paragraphs, lists and fenced code, nested folders, and
 * words drawn with Zipf-like frequencies (English function words at the top, made-up words
 * below), so BM25 sees a long tail as in natural text.
 *
 * `rare` lists planted words, each in only a few notes (2 to 5): a search for one of them
 * has a known answer.
 */
export interface CorpusOptions {
  files: number;
  seed?: number;
  /** Distinct made-up words besides the function words (default 5000). */
  vocabulary?: number;
}

export interface Corpus {
  dir: string;
  /** Relative paths, in the order written. */
  files: string[];
  bytes: number;
  /** Planted rare word → the relative paths that contain it. */
  rare: Map<string, string[]>;
  /** The most frequent made-up words, most frequent first. */
  common: string[];
}

const functionWords =
  'the of and to in a is that for it as with was on be by this are or from at an not but have which you one all can will has more'.split(
    ' ',
  );
const onsets = [
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'br',
  'st',
  'tr',
  'pl',
  'gr',
];
const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ea'];
const codas = ['', '', 'n', 'r', 's', 'l', 'th', 'nd', 'x'];

export function generateCorpus(dir: string, options: CorpusOptions): Corpus {
  const random = mulberry32(options.seed ?? 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const between = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

  const used = new Set<string>(functionWords);
  const makeWord = (syllables: number, prefix = ''): string => {
    // Each collision adds a syllable, so this ends even when short words run out.
    for (let extra = 0; ; extra++) {
      let word = prefix;
      for (let s = 0; s < syllables + extra; s++) word += pick(onsets) + pick(vowels) + pick(codas);
      if (!used.has(word)) {
        used.add(word);
        return word;
      }
    }
  };
  const madeUp = Array.from({ length: options.vocabulary ?? 5000 }, () => makeWord(between(1, 3)));
  const words = [...functionWords, ...madeUp];
  const draw = zipf(words.length, 1.07, random);
  const word = (): string => words[draw()] as string;
  const sentence = (): string => {
    const text = Array.from({ length: between(6, 18) }, word).join(' ');
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  };
  const paragraph = (): string => Array.from({ length: between(2, 5) }, sentence).join(' ');
  const titleCase = (count: number): string =>
    Array.from({ length: count }, () => {
      const w = words[functionWords.length + (draw() % madeUp.length)] as string;
      return w.charAt(0).toUpperCase() + w.slice(1);
    }).join(' ');

  const rareCount = Math.max(10, Math.floor(options.files / 50));
  const rare = new Map<string, string[]>();
  const planted = new Map<number, string[]>();
  for (let r = 0; r < rareCount; r++) {
    const rareWord = makeWord(2, 'zq');
    const owners = new Set<number>();
    const copies = between(2, 5);
    while (owners.size < Math.min(copies, options.files)) owners.add(Math.floor(random() * options.files));
    for (const owner of owners) planted.set(owner, [...(planted.get(owner) ?? []), rareWord]);
  }

  const files: string[] = [];
  let bytes = 0;
  for (let i = 0; i < options.files; i++) {
    const relative = `area-${String(i % 7).padStart(2, '0')}/topic-${String(Math.floor(i / 20) % 50).padStart(2, '0')}/note-${String(i).padStart(5, '0')}.md`;
    const parts: string[] = [];
    if (random() < 0.2)
      parts.push(
        `---\ntags: [${word()}, ${word()}]\ncreated: 2024-01-${String(between(1, 28)).padStart(2, '0')}\n---\n`,
      );
    if (random() < 0.9) parts.push(`# ${titleCase(between(2, 6))}\n`);
    parts.push(`${paragraph()}\n`);
    for (let s = between(1, 5); s > 0; s--) {
      parts.push(`## ${titleCase(between(1, 4))}\n`);
      for (let p = between(1, 4); p > 0; p--) parts.push(`${paragraph()}\n`);
      if (random() < 0.3) parts.push(`${Array.from({ length: between(2, 5) }, () => `- ${sentence()}`).join('\n')}\n`);
      if (random() < 0.1) parts.push(`\`\`\`sh\n${word()} --${word()} ${word()}\n\`\`\`\n`);
    }
    for (const rareWord of planted.get(i) ?? []) {
      parts.push(`${sentence().slice(0, -1)} ${rareWord} ${word()}.\n`);
      rare.set(rareWord, [...(rare.get(rareWord) ?? []), relative]);
    }
    const text = parts.join('\n');
    const absolute = path.join(dir, relative);
    fs.mkdirSync(path.dirname(absolute), { recursive: true });
    fs.writeFileSync(absolute, text);
    files.push(relative);
    bytes += Buffer.byteLength(text);
  }
  return { dir, files, bytes, rare, common: madeUp.slice(0, 20) };
}

/** Ranks 0..n-1 drawn with probability ∝ 1 / (rank + 1)^s, by binary search on the CDF. */
function zipf(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / (k + 1) ** s;
    cdf[k] = sum;
  }
  return () => {
    const target = random() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((cdf[mid] as number) < target) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}

/** A small, fast, seedable PRNG (public domain, by Tommy Ettinger). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
