import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { within } from './bounded.js';
import { QMD_BIN } from './qmd.js';
import type { Exit } from './spawn.js';

/**
 * `qmd mcp` under the SDK's own stdio client, as MCP hosts run it: the SDK spawns the child
 * and decides how it ends (`close()`: stdin EOF, SIGTERM 2 s later, SIGKILL 2 s after that).
 */
export async function sdkSession(env: NodeJS.ProcessEnv, name = 'e2e-sdk') {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, 'mcp'],
    env: env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  // Observing, not driving: the SDK keeps its child private, and only the child can say
  // whether it exited by itself (a code) or was killed (a signal). `close()` forgets it, so
  // it is taken now.
  const child = (transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    client,
    child,
    stderr: () => stderr,
    /** The child's exit, bounded like every wait for a process. */
    exit: () => within(exited, () => `the exit; stderr was:\n${stderr}`),
    /** SIGKILLs the child if it still runs. Call in `finally`. */
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
