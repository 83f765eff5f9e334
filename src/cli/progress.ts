import type { IndexProgress, ProgressFn } from '../store/types.js';

/**
 * A progress bar on stderr when it is a TTY (cli-progress, loaded only then), nothing
 * otherwise: piped output and `qmd mcp` stay quiet. Returns the callback and `stop()`.
 */
export async function progressBar(label: string, unit = 'files'): Promise<{ onProgress?: ProgressFn; stop(): void }> {
  if (!process.stderr.isTTY) return { stop: () => {} };
  const cliProgress = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} {collection} [{bar}] {value}/{total} ${unit}`,
      hideCursor: true,
      clearOnComplete: true,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  let current: string | undefined;
  return {
    onProgress(p: IndexProgress) {
      if (p.collection !== current) {
        if (current !== undefined) bar.stop();
        current = p.collection;
        bar.start(p.total, p.done, { collection: p.collection });
      } else {
        bar.setTotal(p.total);
        bar.update(p.done, { collection: p.collection });
      }
    },
    stop: () => {
      if (current !== undefined) bar.stop();
    },
  };
}
