import * as fs from 'node:fs';
import { isQmdError, QmdError } from '../errors.js';
import { peerLocations } from '../peer/paths.js';

/**
 * A person coming from qmd 2.x runs a first command with no index of ours yet: when qmd 2.x's
 * index is where qmd 2.x keeps it, the "No index" line says so and names `qmd migrate`, in
 * place of only `qmd collection add`.
 */
export function withPeerHint(error: unknown, env: NodeJS.ProcessEnv): unknown {
  if (!isQmdError(error) || error.code !== 'INDEX_MISSING') return error;
  const peer = peerLocations(env).index;
  if (!fs.existsSync(peer) || error.message.includes(peer)) return error;
  return new QmdError(
    'INDEX_MISSING',
    `${error.message.split(': make one')[0]}; qmd 2.x's index is at ${peer}: qmd migrate builds ours from it (or qmd collection add DIR)`,
    { cause: error },
  );
}
