/**
 * Writes a plain value (strings, numbers, booleans, null, arrays, objects) as a TypeScript
 * literal in the house style: single quotes, bare keys where they are identifiers, trailing
 * commas, two-space indent, and anything that fits in 100 columns on one line (as Biome would). Deterministic: key order is insertion order.
 */
export function toSource(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return 'undefined';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const flat = `[${value.map((v) => toSource(v, inner)).join(', ')}]`;
    if (!flat.includes('\n') && flat.length + indent.length <= 100) return flat;
    return `[\n${value.map((v) => `${inner}${toSource(v, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const flat = `{ ${entries.map(([k, v]) => `${key(k)}: ${toSource(v, inner)}`).join(', ')} }`;
  if (!flat.includes('\n') && flat.length + indent.length <= 100) return flat;
  const body = entries.map(([k, v]) => `${inner}${key(k)}: ${toSource(v, inner)},`).join('\n');
  return `{\n${body}\n${indent}}`;
}

function key(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : quote(k);
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}
