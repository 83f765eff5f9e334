import { stat } from 'node:fs/promises';
import { ggufProblem } from '../../llm/gguf-check.js';
import { cachedModelPath } from '../../llm/model-cache.js';
import { isRemoteSpec } from '../../llm/model-choice.js';
import { defaultModelsDir, hfEndpoint } from '../../llm/model-file.js';
import type { Check } from './report.js';

/**
 * The three models of a query (embedding, reranking, query expansion), each as `qmd doctor`
 * sees it without llama.cpp: where its file is (a local path, or the file node-llama-cpp names
 * it in the models folder), its size, and whether it is a whole GGUF model (`ggufProblem`: the
 * magic, the version, and the header's tensors against the file's size; what llama.cpp's loader
 * refuses). A file that is not one (a proxy's login page saved under the model's name, a
 * download cut short) is named with the command that fetches it again.
 */
export interface ModelSpecs {
  /** null: turned off (`--rerank-model off`). */
  embed: string | null;
  rerank: string | null;
  expand: string | null;
}

const ROLE_NOUN = { embed: 'embedding', rerank: 'reranking', expand: 'query expansion' } as const;
const FLAG = { embed: '--embed-model', rerank: '--rerank-model', expand: '--expand-model' } as const;

type Finding = { mark: Check['mark']; line: string; next?: string };

export async function modelsCheck(specs: ModelSpecs, env: NodeJS.ProcessEnv): Promise<Check> {
  const modelsDir = defaultModelsDir(env);
  const findings = await Promise.all(
    (['embed', 'rerank', 'expand'] as const).map(async (role) => ({
      role,
      ...(await modelFinding(role, specs[role], modelsDir, env)),
    })),
  );
  const failed = findings.filter((f) => f.mark === 'fail');
  const missing = findings.filter((f) => f.mark === 'warn');
  const items = findings.map((f) => `${ROLE_NOUN[f.role]}: ${f.line}`);
  const next = [...new Set([...failed, ...missing].map((f) => f.next).filter((n) => n !== undefined))].join('; ');
  if (failed.length > 0) {
    return {
      name: 'models',
      mark: 'fail',
      detail: `${failed.map((f) => ROLE_NOUN[f.role]).join(', ')}: a file that does not load`,
      items,
      next,
    };
  }
  if (missing.length > 0) {
    return {
      name: 'models',
      mark: 'warn',
      detail: `${missing.length} of 3 not downloaded (searches work without them: words only, no reranking or expansion)`,
      items,
      next,
    };
  }
  return { name: 'models', mark: 'ok', detail: `in ${modelsDir}`, items };
}

async function modelFinding(
  role: keyof ModelSpecs,
  spec: string | null,
  modelsDir: string,
  env: NodeJS.ProcessEnv,
): Promise<Finding> {
  if (spec === null) return { mark: 'ok', line: 'off' };
  const remote = isRemoteSpec(spec);
  const file = remote ? cachedModelPath(spec, modelsDir, hfEndpoint(env)) : spec;
  if (file === undefined) {
    return { mark: 'ok', line: `${spec} (its cached file name is known only to node-llama-cpp: not checked)` };
  }
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile()) {
    return remote
      ? { mark: 'warn', line: `${spec}: not downloaded (${file})`, next: 'qmd pull' }
      : {
          mark: 'fail',
          line: `${spec}: no such file`,
          next: `name the file's new place with ${FLAG[role]} PATH.gguf`,
        };
  }
  const size = `${(info.size / 1e6).toFixed(1)} MB`;
  let problem: string | undefined;
  try {
    problem = await ggufProblem(file);
  } catch (error) {
    problem = `it cannot be read (${error instanceof Error ? error.message : String(error)})`;
  }
  if (problem === undefined) return { mark: 'ok', line: `${spec}: ${size} at ${file}, a whole GGUF model` };
  return {
    mark: 'fail',
    line: `${file} (${size}) does not load: ${problem}`,
    next: remote ? 'qmd pull --refresh (fetches it again)' : `replace ${file}, or name another with ${FLAG[role]}`,
  };
}
