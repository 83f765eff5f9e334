import { readFileSync } from 'node:fs';
import type { AnyStateMachine } from 'xstate';
import { QmdError } from '../../errors.js';
import { claimSigint } from '../../sigint.js';
import type { CliContext } from '../context.js';

/** The machines `qmd lifecycle export --machine` knows: the server's lifecycle, and `--shared`'s two. */
export const MACHINES = ['lifecycle', 'shared-server', 'session'] as const;

async function loadMachine(name: string): Promise<AnyStateMachine> {
  switch (name) {
    case 'lifecycle':
      return (await import('../../../machines/lifecycle.js')).lifecycleMachine;
    case 'shared-server':
      return (await import('../../../machines/shared-server.js')).sharedServerMachine;
    case 'session':
      return (await import('../../../machines/session.js')).sessionMachine;
  }
  throw new QmdError('BAD_ARGUMENT', `Unknown machine "${name}": use one of ${MACHINES.join(', ')}`);
}

/**
 * `qmd lifecycle export [--machine lifecycle|shared-server|session] --format mermaid|dot|stately|json`:
 * generated from the machine definition.
 */
export async function lifecycleExport(ctx: CliContext, format: string, machine = 'lifecycle') {
  const { exportMachine, isExportFormat, EXPORT_FORMATS } = await import('../../viz/export.js');
  if (!isExportFormat(format)) {
    throw new QmdError('BAD_ARGUMENT', `Unknown format "${format}": use one of ${EXPORT_FORMATS.join(', ')}`);
  }
  ctx.out(exportMachine(await loadMachine(machine), format).replace(/\n$/, ''));
}

/** `qmd lifecycle trace FILE [--all]`: a QMD_LIFECYCLE_TRACE file as a readable timeline. */
export async function lifecycleTrace(ctx: CliContext, file: string, flags: { all?: boolean }) {
  const { renderTimeline } = await import('../../viz/timeline.js');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new QmdError('NOT_FOUND', `Cannot read the trace ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  ctx.out(renderTimeline(text, { all: flags.all ?? false }).replace(/\n$/, ''));
}

/**
 * `qmd lifecycle inspect [--port N] [--host H]`: a local endpoint that qmd processes stream to
 * (`QMD_INSPECT=ws://…`) and a page that shows them in Stately's inspector. Runs until Ctrl-C.
 */
export async function lifecycleInspect(ctx: CliContext, flags: { port?: number; host?: string }) {
  const { serveInspector } = await import('../../viz/inspect-server.js');
  const server = await serveInspector({
    log: ctx.log,
    ...(flags.port !== undefined && { port: flags.port }),
    ...(flags.host !== undefined && { host: flags.host }),
  });
  ctx.out(`Open ${server.viewerUrl} in a browser, then start qmd with QMD_INSPECT=${server.url}`);
  await new Promise<void>((resolve) => {
    const release = claimSigint();
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      release();
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
}
