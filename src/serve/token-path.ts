/**
 * Where `qmd mcp --http` keeps its bearer token by default: `<index>.mcp-token`, beside the
 * index (as the daemon's pidfile is). Its own module, with no imports: `mcp.ts` names it in a
 * message, and loads nothing more for `qmd mcp` over stdio.
 */
export function tokenPath(indexPath: string): string {
  return `${indexPath}.mcp-token`;
}
