/**
 * The HTTP token file (src/serve/http-token.ts): read again when it changes, at the latest a
 * second after the last read, so rotation needs no restart; gone, unsafe or unusable, it lets
 * no token in. `readTokenFile` is what `qmd mcp config` reads.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isQmdError } from '../../src/errors.js';
import { fileTokenAuth, loadOrCreateToken, readTokenFile, tokenPath } from '../../src/serve/http-token.js';
import { recordingLog } from '../support/recording-log.js';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const bearer = (token: string) => `Bearer ${token}`;

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qmd-token-'));
  file = tokenPath(path.join(dir, 'index.sqlite'));
  fs.writeFileSync(file, `${A}\n`, { mode: 0o600 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('fileTokenAuth', () => {
  it('takes a rewritten token at the next request and refuses the old one', () => {
    const log = recordingLog();
    const auth = fileTokenAuth(file, log);
    expect(auth.check(bearer(A))).toBeNull();
    fs.writeFileSync(`${file}.next`, `${B}\n`, { mode: 0o600 });
    fs.renameSync(`${file}.next`, file);
    expect(auth.check(bearer(B))).toBeNull();
    expect(auth.check(bearer(A))).toBe('Unauthorized: wrong token');
    expect(log.lines).toEqual([`HTTP access: the token file ${file} changed; its new token is in use`]);
  });

  it('deleted: every token is refused, with one warning; back: served again', () => {
    const log = recordingLog();
    const auth = fileTokenAuth(file, log);
    fs.rmSync(file);
    expect(auth.check(bearer(A))).toBe("Unauthorized: the server's token file is missing or unusable (see its log)");
    expect(auth.check(bearer(A))).not.toBeNull();
    expect(log.warnings).toEqual([`the HTTP token file ${file} is gone: every request is refused until it is fixed`]);
    fs.writeFileSync(file, `${B}\n`, { mode: 0o600 });
    expect(auth.check(bearer(B))).toBeNull();
  });

  it('readable by others, or holding no usable token: refused until fixed', () => {
    const log = recordingLog();
    const auth = fileTokenAuth(file, log);
    fs.chmodSync(file, 0o644);
    expect(auth.check(bearer(A))).not.toBeNull();
    fs.chmodSync(file, 0o600);
    expect(auth.check(bearer(A))).toBeNull();
    fs.writeFileSync(file, 'short\n');
    expect(auth.check(bearer('short'))).not.toBeNull();
    expect(log.warnings).toEqual([
      `the HTTP token file ${file} is readable by others (mode 644): chmod 600 ${file}: every request is refused until it is fixed`,
      `the HTTP token file ${file} holds no usable token (at least 16 visible characters, no spaces): every request is refused until it is fixed`,
    ]);
  });
});

describe('readTokenFile (for qmd mcp config)', () => {
  it('the token, or undefined when there is no file; an unsafe file is a QmdError', () => {
    expect(readTokenFile(file)).toBe(A);
    expect(readTokenFile(`${file}-none`)).toBeUndefined();
    fs.chmodSync(file, 0o640);
    let caught: unknown;
    try {
      readTokenFile(file);
    } catch (error) {
      caught = error;
    }
    expect(isQmdError(caught) && caught.message).toBe(
      `the HTTP token file ${file} is readable by others (mode 640): chmod 600 ${file}`,
    );
  });

  it('loadOrCreateToken makes a 43-character token in a 0600 file once, then keeps it', () => {
    fs.rmSync(file);
    const made = loadOrCreateToken(file);
    expect(made.created).toBe(true);
    expect(made.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${made.token}\n`);
    expect(loadOrCreateToken(file)).toEqual({ token: made.token, created: false });
  });
});
