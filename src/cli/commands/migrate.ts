import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore, resolveIndexPath } from '../../core/index.js';
import type { IndexReport } from '../../core/types.js';
import { errorMessage, QmdError } from '../../errors.js';
import { readPeerConfig } from '../../peer/config.js';
import { peerLocations } from '../../peer/paths.js';
import { type MigrationPlan, type PlannedCollection, planMigration } from '../../peer/plan.js';
import { printable } from '../../peer/printable.js';
import { isIndexName } from '../../store/paths.js';
import { readPeerIndex } from '../../store/peer-index.js';
import type { CliContext } from '../context.js';

export interface MigrateFlags {
  /** qmd 2.x's index (default: where qmd 2.x looks, `peerLocations`). */
  from?: string;
  /** qmd 2.x's `index.yml` (default: where qmd 2.x looks). */
  config?: string;
  /** Print the plan; build nothing. */
  dryRun?: boolean;
}

/**
 * `qmd migrate [--from INDEX] [--config FILE] [--dry-run]`: builds an index of ours from qmd
 * 2.x's collections, their settings and contexts (its `index.yml`, else its index's copy),
 * by scanning each collection's folder as qmd 2.x would, then compares the document counts
 * with its index. qmd 2.x's files are only read (its index through a copy: `readPeerIndex`),
 * so it keeps working beside this qmd. All or nothing: the index is built in a file beside the
 * target and renamed into place at the end; an existing target is refused. `--dry-run` prints
 * the plan the real run carries out (`planMigration` decides both), and every line shows
 * what came from qmd 2.x's files `printable`: its control characters escaped.
 */
export async function migrate(ctx: CliContext, flags: MigrateFlags, indexFlag: string | undefined) {
  const out = (line: string) => ctx.out(printable(line));
  const peerName = indexFlag !== undefined && isIndexName(indexFlag) ? indexFlag : 'index';
  const peer = peerLocations(ctx.env, peerName);
  const sourceIndex = path.resolve(flags.from ?? peer.index);
  const sourceConfig = path.resolve(flags.config ?? peer.config);
  const target = targetPath(ctx, sourceIndex, indexFlag);

  const config = readPeerConfig(sourceConfig);
  const index = fs.existsSync(sourceIndex) ? readPeerIndex(sourceIndex) : undefined;
  if (config === undefined && index === undefined) {
    throw new QmdError(
      'NOT_FOUND',
      `Nothing to migrate: no qmd 2.x configuration at ${sourceConfig} and no index at ${sourceIndex} (give them with --config and --from)`,
    );
  }
  const plan = planMigration(config, index);
  if (plan.collections.length + plan.skipped.length === 0) {
    throw new QmdError('NOT_FOUND', `qmd 2.x has no collections in ${config?.file ?? sourceIndex}: nothing to migrate`);
  }
  out(
    `Migrating from qmd 2.x: ${config === undefined ? '(no index.yml)' : config.file}, ${index === undefined ? '(no index)' : index.file}`,
  );
  const nothing = new QmdError(
    'NOT_FOUND',
    "none of qmd 2.x's collections can be carried over (why: above): nothing to build",
  );
  if (flags.dryRun) {
    printPlan(ctx, plan, target);
    if (plan.collections.length === 0) throw nothing;
    return;
  }
  for (const { name, why } of plan.skipped) ctx.log.line(printable(`qmd: skipped collection ${name}: ${why}`));
  if (plan.collections.length === 0) throw nothing;
  refuseExisting(target);
  const building = `${target}.migrating`;
  removeIndexFiles(building);
  try {
    await build(ctx, plan, building);
    fs.renameSync(building, target);
  } finally {
    removeIndexFiles(building);
  }
  for (const note of plan.notes) out(note);
  out(`Index: ${target}. qmd 2.x's files are as they were: it still works with them.`);
  if (ctx.env.INDEX_PATH !== undefined && path.resolve(ctx.env.INDEX_PATH) === sourceIndex) {
    out(`INDEX_PATH still names qmd 2.x's index: unset it (or set QMD_INDEX=${target}) so that qmd uses this one`);
  }
}

/**
 * The index to build: this qmd's (`--index`, `QMD_INDEX`, else its default), except that
 * `INDEX_PATH`, the variable both read, is skipped when it names qmd 2.x's index: building
 * over it is never what is meant. Any other way of naming qmd 2.x's index is refused.
 */
function targetPath(ctx: CliContext, sourceIndex: string, indexFlag: string | undefined): string {
  let target = ctx.indexPath;
  if (path.resolve(target) === sourceIndex && indexFlag === undefined && ctx.env.QMD_INDEX === undefined) {
    const { INDEX_PATH: _peers, ...env } = ctx.env;
    target = resolveIndexPath({ env });
  }
  if (path.resolve(target) === sourceIndex) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `qmd migrate would build over qmd 2.x's own index ${sourceIndex}: choose another --index for ours`,
    );
  }
  return target;
}

/**
 * The index is built beside the target and renamed into place: an existing file (even an
 * empty index, which a running server may hold open) is never replaced.
 */
function refuseExisting(target: string): void {
  if (!fs.existsSync(target)) return;
  throw new QmdError(
    'BAD_ARGUMENT',
    `${target} already exists: qmd migrate builds a new index; move that one away or choose another --index`,
  );
}

/** What makes one collection impossible to carry over, and no other. */
const SKIPPABLE = new Set(['COLLECTION_EXISTS', 'NO_SUCH_DIRECTORY', 'BAD_ARGUMENT']);

async function build(ctx: CliContext, plan: MigrationPlan, file: string): Promise<void> {
  const out = (line: string) => ctx.out(printable(line));
  const warn = (line: string) => ctx.log.line(printable(line));
  const store = openStore(file, { log: ctx.log });
  try {
    const built = new Set<string>();
    for (const planned of plan.collections) {
      let report: IndexReport;
      try {
        report = await store.addCollection(planned.root, {
          name: planned.name,
          mask: planned.mask,
          ignore: planned.ignore,
          ...(planned.update !== undefined && { update: planned.update }),
          includeByDefault: planned.includeByDefault,
        });
      } catch (error) {
        // The plan checked what addCollection checks; the disk may have changed since (a
        // folder removed meanwhile): that one is not carried over, the rest is.
        if (!(error instanceof QmdError) || !SKIPPABLE.has(error.code)) throw error;
        warn(`qmd: skipped collection ${planned.name}: ${error.message}`);
        continue;
      }
      built.add(planned.name);
      const documents = report.added;
      out(describe(planned, documents));
      for (const e of report.errors.slice(0, 5)) warn(`  skipped ${e.file}: ${e.error}`);
    }
    for (const context of plan.contexts) {
      const collection = context.place.split('/')[0] ?? '';
      if (context.place !== '/' && !built.has(collection)) continue;
      try {
        store.setContext(context.place, context.text);
      } catch (error) {
        warn(`qmd: context for ${context.place} not carried over: ${errorMessage(error)}`);
      }
    }
    const contexts = store.listContexts().length;
    out(`${contexts} context${contexts === 1 ? '' : 's'} carried over`);
  } finally {
    await store.close();
  }
}

/** `notes: 12 documents (qmd 2.x: 12), update command: git pull, excluded from searches by default` */
function describe(planned: PlannedCollection, documents: number): string {
  const parts = [`${planned.name}: ${documents} document${documents === 1 ? '' : 's'}`];
  if (planned.peerDocuments !== undefined) {
    const more = documents > planned.peerDocuments ? '; qmd 2.x skips empty files' : '';
    parts[0] += ` (qmd 2.x: ${planned.peerDocuments}${more})`;
  }
  if (planned.renamedFrom !== undefined) parts.push(`was "${planned.renamedFrom}" (not a valid name here)`);
  if (planned.update !== undefined) parts.push(`update command: ${planned.update}`);
  if (!planned.includeByDefault) parts.push('excluded from searches by default');
  return parts.join(', ');
}

/** The plan, one line each, in the words of the real run: what it would add, skip and set. */
function printPlan(ctx: CliContext, plan: MigrationPlan, target: string): void {
  const out = (line: string) => ctx.out(printable(line));
  for (const c of plan.collections) {
    const documents = c.peerDocuments === undefined ? '' : `, ${c.peerDocuments} documents in qmd 2.x`;
    out(`would add ${c.name}: ${c.root} (${c.mask}), ignoring ${c.ignore.join(', ')}${documents}`);
  }
  for (const { name, why } of plan.skipped) out(`would skip collection ${name}: ${why}`);
  for (const context of plan.contexts) out(`would set context ${context.place}: ${context.text}`);
  for (const note of plan.notes) out(note);
  out(`Dry run: nothing was written; the index would be ${target}`);
}

function removeIndexFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
}
