import type { Log } from '../log.js';

/**
 * Where llama.cpp's log lines go. The default logger of node-llama-cpp writes info/log/debug
 * lines to stdout (`console.info`/`console.debug`), which in `qmd mcp` is the JSON-RPC
 * stream, so every line is routed to our stderr `Log` (`src/log.ts`). (The addon can also
 * bypass any logger and write to stdout itself: `llama.ts` says when, and how we avoid it.)
 */
/**
 * node-llama-cpp's `logger` option: one call per llama.cpp message. Warnings and worse
 * become warnings; the rest (seen only when `NODE_LLAMA_CPP_LOG_LEVEL` lowers the level
 * below its default `warn`) plain lines. Messages arrive with their trailing newline.
 */
export function llamaLogger(log: Log): (level: string, message: string) => void {
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
