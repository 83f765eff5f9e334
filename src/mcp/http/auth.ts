import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Bearer-token access for `qmd mcp --http`: loopback keeps other machines out and the
 * Host/Origin guard keeps web pages out, but any other user of this machine can reach
 * 127.0.0.1. A request to `/mcp`, `/query` or `/search` must carry
 * `Authorization: Bearer <token>`, the token only this user can read (`src/serve/http-token.ts`).
 * `/health` stays open: it says nothing about the notes.
 */
export interface BearerAuth {
  /** `null` when the request may be served, else why not (sent with a 401). */
  check(authorization: string | undefined): string | null;
}

/** The `WWW-Authenticate` header of a 401 (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="qmd"';

export function createBearerAuth(token: string): BearerAuth {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on a prefix.
  const expected = digest(token);
  return {
    check(authorization) {
      if (authorization === undefined || authorization === '') {
        return 'Unauthorized: send Authorization: Bearer <token> (the token file is beside the index)';
      }
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
      if (match?.[1] === undefined) return 'Unauthorized: the Authorization header is not "Bearer <token>"';
      return timingSafeEqual(digest(match[1]), expected) ? null : 'Unauthorized: wrong token';
    },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
