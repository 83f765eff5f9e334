import { createLifecycle, type Lifecycle } from '../../src/lifecycle/host.js';
import { silentLog } from '../../src/log.js';
import { DETACHED } from '../../test/support/host-harness.js';

/**
 * A real lifecycle, started, with every process-level source off (`stdin`, `stdout`, `signals`
 * and `parent` null) and no way to touch the process: its exit code and exit are sinks.
 */
export function benchLifecycle(): Lifecycle {
  const lifecycle = createLifecycle({ ...DETACHED, log: silentLog });
  lifecycle.start({ closeTransport: async () => {}, disposeStore: async () => {} });
  return lifecycle;
}
