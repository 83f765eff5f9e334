import { createLog, type Log } from '../log.js';
import { type Config, type GlobalOptions, readConfig } from './config.js';

/** What every command gets: its configuration, where output goes, and the environment. */
export interface CliContext {
  /** Every flag and `QMD_*` variable, typed (config.ts). */
  config: Config;
  /** `config.indexPath`, which nearly every command needs. */
  indexPath: string;
  /** The environment itself, for what is not qmd's to interpret: `XDG_RUNTIME_DIR`, a child's env. */
  env: NodeJS.ProcessEnv;
  debug: boolean;
  /** stderr, best effort: progress, warnings, breadcrumbs. */
  log: Log;
  /** stdout for one-shot commands' results. Never used by `qmd mcp` over stdio. */
  out: (text: string) => void;
}

export function createContext(options: GlobalOptions, env = process.env): CliContext {
  const log = createLog(process.stderr);
  const config = readConfig(options, env, log);
  return {
    config,
    indexPath: config.indexPath,
    env,
    debug: config.debug,
    log,
    out: (text) => {
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    },
  };
}
