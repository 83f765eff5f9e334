import { createLog, type Log } from '../log.js';
import { resolveIndexPath } from '../store/paths.js';

/** What every command gets: where the index is, where output goes, and the environment. */
export interface CliContext {
  indexPath: string;
  env: NodeJS.ProcessEnv;
  debug: boolean;
  /** stderr, best effort: progress, warnings, breadcrumbs. */
  log: Log;
  /** stdout for one-shot commands' results. Never used by `qmd mcp` over stdio. */
  out: (text: string) => void;
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
