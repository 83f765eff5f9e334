/**
 * The little TOML that Codex's configuration needs (strings, arrays of strings, tables): keys
 * and basic strings, written so that any TOML 1.0 reader reads back exactly the value given.
 */

/** A bare key when it is one (`A-Za-z0-9_-`), else a quoted key. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/**
 * A basic string. JSON's escapes are TOML's (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`,
 * `\uXXXX`) except that TOML also forbids a raw DEL (U+007F), which JSON leaves as it is.
 */
export function tomlString(value: string): string {
  return JSON.stringify(value).replaceAll('\u007f', '\\u007F');
}
