import { createLog, type Log } from '../log.js';
import { resolveIndexPath } from '../store/paths.js';
import type { StoreOptions } from '../store/types.js';

/** What every command gets: where the index is, where output goes, and the environment. */
export interface CliContext {
  indexPath: string;
  env: NodeJS.ProcessEnv;
  debug: boolean;
  /** stderr, best effort: progress, warnings, breadcrumbs. */
  log: Log;
  /** stdout for one-shot commands' results. Never used by `qmd mcp` over stdio. */
  out: (text: string) => void;
  /**
   * How the store makes its embedder, when not the product's own (`StoreOptions.createEmbedder`).
   * `createContext` never sets it, so no flag or environment variable can: only a program that
   * builds its own context does — the naive-dispose contender of the disposal benchmarks
   * (`bench/contenders/naive-server.ts`).
   */
  createEmbedder?: StoreOptions['createEmbedder'];
}

export function createContext(options: { index?: string; debug?: boolean }, env = process.env): CliContext {
  return {
    indexPath: resolveIndexPath({ ...(options.index !== undefined && { flag: options.index }), env }),
    env,
    debug: options.debug ?? false,
    log: createLog(process.stderr),
    out: (text) => {
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    },
  };
}
