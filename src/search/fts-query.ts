/**
 * Turns what a user (or an agent) typed into an FTS5 MATCH expression that cannot be a
 * syntax error. FTS5 syntax is never passed through: every term becomes a double-quoted
 * string, which FTS5 tokenizes exactly like the documents (`porter unicode61`), so
 * `foo_bar`, `title:x` or `C++` become the phrases their tokens make.
 *
 * - Words are separated by whitespace; a chunk with no letter or digit (`(`, `*`, `"`, `🎉`)
 *   is dropped.
 * - `"two words"` in balanced double quotes is a phrase; an unbalanced quote is ignored.
 * - A trailing `*` makes a prefix search (`index*` finds `indexing`).
 * - The operators `AND`, `OR`, `NOT`, `NEAR` (in capitals) are not interpreted: they are
 *   dropped, so pasted FTS syntax degrades to its terms rather than to an error or to
 *   requiring the word "and".
 * - All terms are required (`all`); `any` joins them with OR, which the search uses when
 *   requiring all of them finds nothing (a natural-language question rarely has every word
 *   in one note).
 * - At most 32 terms, so a pasted page cannot make a huge query.
 */
export interface FtsQuery {
  all: string;
  any: string;
  terms: number;
}

const operators = new Set(['AND', 'OR', 'NOT', 'NEAR']);
const hasWordCharacter = /[\p{L}\p{N}]/u;
const maxTerms = 32;

export function toFtsQuery(input: string): FtsQuery | undefined {
  const terms: string[] = [];
  const quotes = (input.match(/"/g) ?? []).length;
  // With an odd number of quotes nothing is a phrase: every quote is just a separator.
  const pieces = quotes % 2 === 0 ? input.split('"') : [input.replaceAll('"', ' ')];
  pieces.forEach((piece, index) => {
    if (index % 2 === 1) {
      const phrase = piece.trim();
      if (hasWordCharacter.test(phrase)) terms.push(quote(phrase));
      return;
    }
    for (const chunk of piece.split(/\s+/)) {
      if (operators.has(chunk)) continue;
      const prefix = chunk.endsWith('*');
      const word = chunk.replace(/\*+$/, '');
      if (!hasWordCharacter.test(word)) continue;
      terms.push(prefix ? `${quote(word)}*` : quote(word));
    }
  });
  const kept = terms.slice(0, maxTerms);
  if (kept.length === 0) return undefined;
  return { all: kept.join(' '), any: kept.join(' OR '), terms: kept.length };
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
