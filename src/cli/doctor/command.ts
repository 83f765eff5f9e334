import { DEFAULT_EMBED_MODEL } from '../../llm/model-file.js';
import { hostFacts } from '../../relay/paths.js';
import type { CliContext } from '../context.js';
import { formatModels } from '../format.js';
import { deviceCheck, environmentCheck, indexChecks, runtimeCheck, sqliteChecks } from './checks.js';
import { modelsCheck } from './models.js';
import { scanProcesses } from './processes.js';
import { type DoctorReport, formatDoctor } from './report.js';

export interface DoctorFlags {
  json?: boolean;
  /** Load llama.cpp to say which device it gets (seconds; off by default). */
  probe?: boolean;
}

/**
 * `qmd doctor`: every check, then every qmd process of this user and what should not be among
 * them, each with the command that fixes it. Exit 1 when anything is wrong (a `✗`); warnings
 * (`⚠`: a model not downloaded, notes not embedded) leave it 0. Bounded: each socket is asked
 * for at most 2 s, all at once; llama.cpp loads only with `--probe`.
 */
export async function doctor(ctx: CliContext, flags: DoctorFlags = {}): Promise<void> {
  const report = await diagnose(ctx, flags);
  ctx.out(flags.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
  if (!report.ok) process.exitCode = 1;
}

export async function diagnose(ctx: CliContext, flags: DoctorFlags = {}): Promise<DoctorReport> {
  const facts = hostFacts(ctx.env);
  // The sockets are asked while the index is checked.
  const scanning = scanProcesses({ facts, indexPath: ctx.indexPath });
  const index = await indexChecks(ctx.indexPath);
  const { models } = ctx.config;
  const specs = {
    embed: ctx.config.embed.model ?? index.status?.embeddings.model ?? DEFAULT_EMBED_MODEL,
    rerank: models.rerankModel ?? null,
    expand: models.expandModel ?? null,
  };
  const gpuSource = models.given.gpu ? 'given' : 'the default';
  const checks = [
    runtimeCheck(),
    ...sqliteChecks(),
    ...index.checks,
    environmentCheck(ctx.env),
    await modelsCheck(specs, ctx.env),
    deviceCheck(models.gpu, gpuSource, flags.probe ? await probeDevice(ctx) : undefined),
  ];
  const scan = await scanning;
  const ok = ![...checks, ...scan.problems].some((c) => c.mark === 'fail');
  return {
    index: ctx.indexPath,
    runtime: `Node ${process.version} on ${process.platform}-${process.arch}, better-sqlite3`,
    checks,
    ...scan,
    ok,
  };
}

/** llama.cpp's backend as `qmd status` reports it (its first line): node-llama-cpp loads, no model does. */
async function probeDevice(ctx: CliContext): Promise<{ line: string; error?: string }> {
  const { LlmRuntime } = await import('../../llm/runtime.js');
  const runtime = new LlmRuntime({ gpu: ctx.config.models.gpu, log: ctx.log });
  try {
    const report = await runtime.probe();
    const line =
      formatModels({ ...report, configured: { embed: null, rerank: null, expand: null } }).split('\n')[0] ?? '';
    return { line: line.replace(/^llama\.cpp: /, '') };
  } catch (error) {
    return { line: '', error: error instanceof Error ? error.message : String(error) };
  } finally {
    await runtime.dispose().catch(() => {});
  }
}
