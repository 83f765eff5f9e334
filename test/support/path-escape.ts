/**
 * Every way we know of to ask for something outside the collections, as one
 * table. `test/store/refs.test.ts` checks the authority (`parseRef`) against it; the store,
 * the MCP tools and resource, and the spawned CLI check that each surface gives the same
 * answer and never a byte of what lies outside.
 *
 * Verdicts:
 * - `outside`: refused as OUTSIDE_COLLECTIONS before anything is looked up;
 * - `bad`: refused as BAD_ARGUMENT (not a reference at all);
 * - `indexOnly`: a well-formed reference, so the authority lets it through — and then only the
 *   index answers: nothing indexed has that name, so it is NOT_FOUND (a symlink out of a
 *   collection, a file beside the collections, a file that does not exist).
 */
export type Verdict = 'outside' | 'bad' | 'indexOnly';

export interface PathEscapeCase {
  input: string;
  verdict: Verdict;
  why: string;
}

/**
 * The places the table refers to: `dir` holds `secret.md` (never indexed) and the collection
 * `notes` at `notes`, which holds `link.md`, a symlink to `../secret.md`.
 */
export interface PathEscapePlaces {
  dir: string;
  notes: string;
}

export function pathEscapeCases({ dir, notes }: PathEscapePlaces): PathEscapeCase[] {
  const outside = (input: string, why: string): PathEscapeCase => ({ input, verdict: 'outside', why });
  const bad = (input: string, why: string): PathEscapeCase => ({ input, verdict: 'bad', why });
  const indexOnly = (input: string, why: string): PathEscapeCase => ({ input, verdict: 'indexOnly', why });
  return [
    outside('../secret.md', 'a .. segment'),
    outside('notes/../secret.md', '.. after a collection'),
    outside('notes/../../etc/passwd', 'climbing twice'),
    outside('..', '.. alone'),
    outside('notes/ .. /secret.md', 'a spaced .. segment'),
    outside('%2e%2e/secret.md', '.. percent-encoded in a plain reference'),
    outside('%2E%2E%2Fsecret.md', '.. and / percent-encoded, upper case'),
    outside('notes/%2e%2e/%2e%2e/etc/passwd', 'encoded .. twice'),
    outside('..%2f..%2fetc%2fpasswd', 'encoded slashes'),
    outside('qmd://../secret.md', '.. in a qmd:// URI'),
    outside('qmd://%2e%2e/secret.md', 'encoded .. in a qmd:// URI'),
    outside('qmd://notes/..%2Fsecret.md', 'an encoded slash making .. in a URI'),
    outside('qmd://notes/%2e%2e/%2e%2e/secret.md', 'encoded .. twice in a URI'),
    outside('qmd://%252e%252e/secret.md', 'double-encoded .. in a URI'),
    outside('QMD://../secret.md', 'the scheme in upper case'),
    outside('qmd:///etc/passwd', 'a qmd:// URI of an absolute path outside'),
    outside('qmd://file:///etc/passwd', 'another scheme inside a qmd:// URI'),
    outside('file:///etc/passwd', 'a file:// URI'),
    outside('http://example.com/a.md', 'an http:// URL'),
    outside('/etc/passwd', 'an absolute path outside'),
    outside(`${dir}/secret.md`, 'an absolute path to a real file beside the collections'),
    outside(`${notes}/../secret.md`, 'an absolute path into a collection, then out'),
    outside(`${notes}-evil/a.md`, 'a sibling whose name starts like a root'),
    outside('~/.ssh/id_rsa', 'the home directory'),
    outside('~root/.ssh/id_rsa', "another user's home"),
    outside('C:\\Windows\\win.ini', 'a Windows path'),
    outside('C:/Windows/win.ini', 'a Windows path with slashes'),
    outside('\\\\server\\share\\a.md', 'a UNC path'),
    outside('notes\\..\\secret.md', '.. between backslashes'),
    outside('../*.md', 'a glob that climbs'),
    outside('notes/../*.md', 'a glob that climbs out of a collection'),
    outside('**/../secret.md', 'a glob with .. after **'),
    outside('/etc/*', 'an absolute glob outside'),
    bad('   ', 'blank'),
    bad('notes/pools.md\0.md', 'NUL'),
    bad('notes//pools.md', 'an empty segment'),
    bad('notes/./pools.md', 'a . segment'),
    bad('./notes/pools.md', 'a leading ./'),
    bad('notes\\pools.md', 'a backslash'),
    bad('#zz', 'an invalid docid'),
    bad('qmd://%E0%A4%A', 'a malformed escape in a URI'),
    bad(notes, "a collection's root itself"),
    bad(`${notes}//pools.md`, 'an empty segment in an absolute path'),
    indexOnly('secret.md', 'a file beside the collections, named without a collection'),
    indexOnly('link.md', 'a symlink out of a collection: never indexed'),
    indexOnly('notes/link.md', 'the same symlink with its collection'),
    indexOnly(`${notes}/link.md`, 'the same symlink by absolute path'),
    indexOnly('qmd://notes/link.md', 'the same symlink as a URI'),
    indexOnly('etc/passwd', 'a relative path that names nothing indexed'),
    indexOnly('outside/secret.md', 'a folder that is no collection'),
  ];
}
