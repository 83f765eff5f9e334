import type { LifecycleConfig } from '../cli/config.js';
import type { LifecycleOptions } from '../lifecycle/host.js';
import type { Log } from '../log.js';

/**
 * The lifecycle options `qmd mcp` takes from its configuration, the same over stdio, HTTP and
 * `--shared`: the bounds, the trace file and, when `QMD_INSPECT` is set, the Stately inspector
 * observer (imported only then: ws and @statelyai/inspect stay off the start-up path).
 */
export async function lifecycleOptions(
  config: LifecycleConfig,
  log: Log,
): Promise<Pick<LifecycleOptions, 'drainTimeoutMs' | 'stepTimeoutMs' | 'watchdogMs' | 'traceFile' | 'inspect'>> {
  const inspect: NonNullable<LifecycleOptions['inspect']> = [];
  if (config.inspectUrl) {
    const { createInspectObserver } = await import('../viz/inspect-observer.js');
    inspect.push(createInspectObserver(config.inspectUrl, log).observe);
  }
  const { inspectUrl: _url, ...bounds } = config;
  return { ...bounds, inspect };
}
