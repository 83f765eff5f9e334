import * as os from 'node:os';
import * as path from 'node:path';
import { envText } from '../env.js';

/**
 * Where qmd 2.x (the peer, `@tobilu/qmd`; rules read from 2.8.3's `dist/store.js` and
 * `dist/collections.js`) keeps an index and its configuration. `name` is its `--index NAME`
 * (`index` unless given).
 */
export interface PeerLocations {
  /** `INDEX_PATH`, else `$XDG_CACHE_HOME/qmd/NAME.sqlite` (`~/.cache` without the variable). */
  index: string;
  /** `$QMD_CONFIG_DIR/NAME.yml`, else `$XDG_CONFIG_HOME/qmd/NAME.yml`, else `~/.config/qmd/NAME.yml`. */
  config: string;
}

export function peerLocations(env: NodeJS.ProcessEnv, name = 'index'): PeerLocations {
  const home = envText(env, 'HOME') ?? os.homedir();
  const indexPath = envText(env, 'INDEX_PATH');
  const cache = envText(env, 'XDG_CACHE_HOME') ?? path.join(home, '.cache');
  const configDir =
    envText(env, 'QMD_CONFIG_DIR') ?? path.join(envText(env, 'XDG_CONFIG_HOME') ?? path.join(home, '.config'), 'qmd');
  return {
    index: path.resolve(indexPath ?? path.join(cache, 'qmd', `${name}.sqlite`)),
    config: path.resolve(configDir, `${name}.yml`),
  };
}
