import { QmdError } from '../errors.js';
import { climbs, decodedOrSelf } from './refs.js';

const uriScheme = /^[a-z][a-z0-9+.-]*:\/\//i;
const windowsDrive = /^[A-Za-z]:/;
const example = 'give a folder relative to the collection root, like 2024/q1';

/**
 * The folder filter of `search`, `query` and `vsearch` (`SearchOptions.folder`), checked and
 * normalized: a path relative to the root of each collection searched, trailing `/` dropped.
 * It only ever narrows what the index holds, but a path that could name something outside a
 * collection is refused as `get` refuses it (`refs.ts`), so a caller learns at once that it
 * asked for the wrong thing: OUTSIDE_COLLECTIONS for a `..` segment (also spaced or
 * percent-encoded), an absolute path (`/…`, `~…`, `C:…`, `\\…`) or a URI; BAD_ARGUMENT for a
 * blank one, NUL, backslashes, empty or `.` segments. Undefined (no filter) stays undefined.
 */
export function checkFolder(folder: string | undefined): string | undefined {
  if (folder === undefined) return undefined;
  if (typeof folder !== 'string') throw new QmdError('BAD_ARGUMENT', `folder must be a string; ${example}`);
  const text = folder.trim();
  if (text === '') throw new QmdError('BAD_ARGUMENT', `folder is blank: ${example}`);
  if (text.includes('\0')) throw new QmdError('BAD_ARGUMENT', 'folder cannot contain NUL');
  if (climbs(text) || climbs(decodedOrSelf(text))) {
    throw new QmdError('OUTSIDE_COLLECTIONS', `folder "${folder}" climbs out of the collection (..): ${example}`);
  }
  if (/^[/\\~]/.test(text) || windowsDrive.test(text) || uriScheme.test(text)) {
    throw new QmdError('OUTSIDE_COLLECTIONS', `folder "${folder}" is not inside a collection: ${example}`);
  }
  if (text.includes('\\')) throw new QmdError('BAD_ARGUMENT', `Use forward slashes in folder "${folder}"`);
  const path = text.replace(/\/+$/, '');
  if (path.split('/').some((segment) => segment === '' || segment === '.')) {
    throw new QmdError('BAD_ARGUMENT', `folder "${folder}" has an empty or "." segment: ${example}`);
  }
  return path;
}
