import { existsSync } from 'node:fs';
import { QmdError } from '../errors.js';
import { isRemoteSpec, type ModelChoice } from '../llm/index.js';

/** How the named model was named, for messages: the flag or the variable. */
export type GivenAs = '--embed-model' | 'QMD_EMBED_MODEL';

/**
 * Why the model this store chose cannot search the index's vectors although its file is
 * there: another fingerprint. One line each, saying what to do; a search never mixes vectors of
 * two models, so the caller answers with BM25 (`query`) or refuses (`vsearch`).
 */
export function modelMismatch(choice: ModelChoice, indexModel: string | null, givenAs: GivenAs): QmdError {
  const index = indexModel ?? 'another model';
  const { spec } = choice;
  if (choice.source === 'flag' || choice.source === 'env') {
    const reembed = givenAs === '--embed-model' ? `qmd embed --embed-model ${spec}` : 'qmd embed';
    return new QmdError(
      'MODEL_MISMATCH',
      `the index is embedded with ${index}, and ${givenAs} names another model (${spec}): ` +
        `leave ${givenAs} out to search with the index's model, or re-embed the index with it (${reembed})`,
    );
  }
  if (indexModel === spec) {
    return new QmdError(
      'MODEL_MISMATCH',
      `the model file ${spec} has changed since the index was embedded with it: ` +
        're-embed with it (qmd embed), or put the original file back',
    );
  }
  return new QmdError(
    'MODEL_MISMATCH',
    `the index was re-embedded with ${index} after this process loaded ${spec}: restart it to search with the new model`,
  );
}

/**
 * The index's own model file is gone (moved, deleted, or the index was copied from another
 * machine): say where the index expected it and how to name its new place. Undefined when the
 * problem is another (an `hf:` model not downloaded says so itself, `src/llm/model-cache.ts`).
 */
export function rememberedModelGone(choice: ModelChoice): QmdError | undefined {
  if (choice.source !== 'index' || isRemoteSpec(choice.spec) || existsSync(choice.spec)) return undefined;
  return new QmdError(
    'MODEL_UNAVAILABLE',
    `the index's embedding model ${choice.spec} is gone (moved or deleted?): name its new place with ` +
      '--embed-model PATH or QMD_EMBED_MODEL=PATH (qmd embed --embed-model PATH remembers it, nothing re-embedded)',
  );
}
