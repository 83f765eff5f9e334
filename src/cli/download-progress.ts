import type { DownloadProgress } from '../llm/index.js';

/** Where the progress goes: stderr, or a fake with the same three members. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface DownloadReporterOptions {
  stream?: ProgressStream;
  /** Milliseconds; injected by tests. */
  now?: () => number;
  /** Without a terminal, one line this often (the first at once). */
  lineEveryMs?: number;
}

export interface DownloadReporter {
  onProgress(progress: DownloadProgress): void;
  /** Clears the bar (a terminal) if one is drawn. Idempotent. */
  stop(): void;
}

/** A terminal redraws at most this often: node-llama-cpp reports every 64 KiB. */
const REDRAW_MS = 100;
const BAR_CELLS = 24;

/**
 * What a person sees while `qmd embed` downloads its model (the start and end are lines of
 * the LLM's own, `src/llm/model-file.ts`): on a terminal a bar redrawn in place, with the
 * bytes, the rate and the time left, cleared when the file is complete; piped, one plain line
 * at once and then every 10 s, so a script's log shows the download is alive. Never stdout.
 */
export function downloadReporter(options: DownloadReporterOptions = {}): DownloadReporter {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const lineEveryMs = options.lineEveryMs ?? 10_000;
  const tty = stream.isTTY === true;
  let started: number | undefined;
  let lastShown: number | undefined;
  let drawn = false;

  const clear = (): void => {
    if (drawn) stream.write('\r\x1b[K');
    drawn = false;
  };
  return {
    onProgress({ downloadedBytes, totalBytes }) {
      const at = now();
      started ??= at;
      const complete = totalBytes > 0 && downloadedBytes >= totalBytes;
      if (tty && complete) {
        clear();
        return;
      }
      const due = lastShown === undefined || at - lastShown >= (tty ? REDRAW_MS : lineEveryMs);
      if (!due || complete) return;
      lastShown = at;
      const facts = describe(downloadedBytes, totalBytes, at - started);
      if (!tty) {
        stream.write(`Downloading: ${facts}\n`);
        return;
      }
      const line = `Downloading [${bar(downloadedBytes, totalBytes)}] ${facts}`;
      stream.write(`\r${line.slice(0, Math.max(20, (stream.columns ?? 80) - 1))}\x1b[K`);
      drawn = true;
    },
    stop: clear,
  };
}

function bar(done: number, total: number): string {
  const filled = total > 0 ? Math.min(BAR_CELLS, Math.floor((done / total) * BAR_CELLS)) : 0;
  return '#'.repeat(filled) + '-'.repeat(BAR_CELLS - filled);
}

/** `36% (120.5 of 333.6 MB, 4.2 MB/s, 51 s left)`; the rate and time once a moment has passed. */
export function describe(done: number, total: number, elapsedMs: number): string {
  const percent = total > 0 ? `${Math.floor((done / total) * 100)}% ` : '';
  const amount = total > 0 ? `${megabytes(done)} of ${megabytes(total)} MB` : `${megabytes(done)} MB`;
  if (elapsedMs < 1000 || done === 0) return `${percent}(${amount})`;
  const rate = done / (elapsedMs / 1000);
  const left = total > done ? `, ${Math.ceil((total - done) / rate)} s left` : '';
  return `${percent}(${amount}, ${megabytes(rate)} MB/s${left})`;
}

function megabytes(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
