/**
 * Where llama.cpp's log lines go. The default logger of node-llama-cpp writes info/log/debug
 * lines to stdout (`console.info`/`console.debug`), which in `qmd mcp` is the JSON-RPC
 * stream, so every line is routed here and from here to stderr. (The addon can also bypass
 * any logger and write to stdout itself: `llama.ts` says when, and how we avoid it.)
 *
 * `LlmLog` is structurally the `Log` of `src/lifecycle/stderr.ts` (`src/llm/` imports
 * nothing of ours): pass that one in.
 */
export interface LlmLog {
  line(text: string): void;
  /** A warning; the `Log` it usually is prefixes `QMD Warning: `. */
  warn(text: string): void;
}

/** A stderr writer that never throws (a closed stderr loses the line and nothing else). */
export const stderrLog: LlmLog = {
  line: (text) => writeStderr(text),
  warn: (text) => writeStderr(`QMD Warning: ${text}`),
};

let guarded = false;

function writeStderr(text: string): void {
  try {
    if (!guarded) {
      guarded = true;
      // An EPIPE on stderr arrives as an 'error' event; unhandled, it would crash the process.
      process.stderr.on('error', () => {});
    }
    if (!process.stderr.destroyed) process.stderr.write(`${text}\n`);
  } catch {
    // Best effort by design.
  }
}

/**
 * node-llama-cpp's `logger` option: one call per llama.cpp message. Warnings and worse
 * become warnings; the rest (seen only when `NODE_LLAMA_CPP_LOG_LEVEL` lowers the level
 * below its default `warn`) plain lines. Messages arrive with their trailing newline.
 */
export function llamaLogger(log: LlmLog): (level: string, message: string) => void {
  return (level, message) => {
    const text = message.trimEnd();
    if (text === '') return;
    try {
      if (level === 'warn' || level === 'error' || level === 'fatal') log.warn(`llama.cpp: ${text}`);
      else log.line(`llama.cpp: ${text}`);
    } catch {
      // A logger that throws must not take a native callback down with it.
    }
  };
}
