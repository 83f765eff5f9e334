import type { Log } from '../../src/log.js';

/** A log that keeps what it is given, for assertions (`silentLog` in src/log.ts keeps nothing). */
export interface RecordingLog extends Log {
  /** Every line as stderr would show it: a warning starts `QMD Warning: `. */
  readonly lines: string[];
  /** The warnings alone, without the prefix. */
  readonly warnings: string[];
  /** Settles at the first warning. */
  readonly firstWarning: Promise<void>;
}

/** `onLine` hears each line as it is recorded (a harness puts it in its ordered call list). */
export function recordingLog(onLine?: (kind: 'line' | 'warn', text: string) => void): RecordingLog {
  const lines: string[] = [];
  const warnings: string[] = [];
  let warned!: () => void;
  const firstWarning = new Promise<void>((resolve) => {
    warned = resolve;
  });
  return {
    lines,
    warnings,
    firstWarning,
    line(text) {
      lines.push(text);
      onLine?.('line', text);
    },
    warn(text) {
      lines.push(`QMD Warning: ${text}`);
      warnings.push(text);
      onLine?.('warn', text);
      warned();
    },
  };
}
