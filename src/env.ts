import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The primitives every reader of the environment and of numeric flags shares (docs/design.md §6).
 * The typed reader of qmd's own variables and flags is `src/cli/config.ts`; these are what it,
 * the store's index path and the LLM's model directory have in common.
 */

/** A variable's value, trimmed; unset and blank are both `undefined` (`QMD_INDEX=` does not mean "here"). */
export function envText(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return nonBlank(env[name]);
}

/** `text` trimmed, or `undefined` when it is missing or blank. */
export function nonBlank(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/**
 * The longest delay a Node timer keeps: a larger one fires after 1 ms (with a
 * TimeoutOverflowWarning), so `QMD_DRAIN_TIMEOUT_MS=9999999999` would mean "do not wait".
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The one whole-number parser, for flags and variables alike: decimal digits only, from `min`
 * to `max`, else `undefined`. Digits only because `Number()` accepts what nobody means as a
 * count: `1e3`, `0x10`, `1.5`, `-0`, `Infinity`.
 */
export function parseWholeNumber(text: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/**
 * qmd's cache directory, with `parts` appended: `$XDG_CACHE_HOME/qmd`, else `$HOME/.cache/qmd`,
 * else under the account's home directory. The default index, the compile cache and the
 * downloaded models all live here (the peer qmd keeps its models in the same place).
 */
export function qmdCacheDir(env: NodeJS.ProcessEnv, ...parts: string[]): string {
  const cache = envText(env, 'XDG_CACHE_HOME') ?? path.join(envText(env, 'HOME') ?? os.homedir(), '.cache');
  return path.resolve(cache, 'qmd', ...parts);
}

/**
 * A duration as a person writes one: `30s`, `5m`, `1h`, `250ms`, or whole milliseconds; from
 * 100 ms to the longest timer. Undefined when it is none of those.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * unit;
  return ms >= 100 && ms <= MAX_TIMER_MS ? ms : undefined;
}
