/**
 * `qmd mcp`'s flags and their defaults, apart from the command (`mcp.ts`): the start-up fast
 * path (src/cli/fast-path.ts) needs only these before it runs the code-cached script, and
 * importing `mcp.ts` for them loaded a dozen ES chunks (the command's context, configuration,
 * models, index vocabulary) that the script then loads again (docs/design.md §5, "Start-up").
 */
export interface McpFlags {
  http?: boolean;
  port: number;
  host: string;
  daemon?: boolean;
  shared?: boolean;
  sharedServer?: boolean;
  /** `--token T`: refused (a token on the command line is every local user's to read); kept to say so. */
  token?: string;
  /** `--token-file FILE`: the HTTP bearer token's file, instead of the one beside the index. */
  tokenFile?: string;
  /** `--no-auth` sets it false: HTTP without a token, for any local user. */
  auth?: boolean;
  /** `--no-watch` sets it false: serve the index as it is, without keeping it fresh (also QMD_WATCH=0). */
  watch?: boolean;
}

/** `qmd mcp` with no options: stdio (the HTTP defaults are commander's defaults for --port, --host and --no-auth). */
export const MCP_DEFAULTS: McpFlags = { port: 8181, host: '127.0.0.1', auth: true, watch: true };
