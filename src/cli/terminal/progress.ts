import type { Writable } from 'node:stream';
import { type Clock, realClock, type TimerHandle } from '../../lifecycle/clock.js';
import { createLog, type Log } from '../../log.js';
import { fitWidth, paintFor, type TerminalStream, terminalOf } from './terminal.js';

/** Piped or redirected: a plain line at least this often while work goes on, so a log shows it is alive. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;
/** A terminal: the fewest milliseconds between two redraws of the bar (10 a second). */
const REDRAW_MS = 100;
/**
 * Rate and time left appear once the work has been measured this long, over at least
 * `RATE_SAMPLES` updates that moved it on: before, they are noise (one slow first unit read as
 * the rate gave `embed` a first "20h 25m left").
 */
const RATE_AFTER_MS = 1_000;
const RATE_SAMPLES = 3;
const BAR_MAX = 30;
const BAR_MIN = 10;
const LABEL_MIN = 8;

export interface ProgressOptions {
  /** Where progress goes: stderr, so stdout stays the command's result. */
  stream?: Writable & TerminalStream;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Piped: a line at least this often (`QMD_PROGRESS_INTERVAL_MS`, default 10 s). */
  intervalMs?: number;
}

/**
 * Progress of one long command, on stderr. On a terminal, one bar redrawn in place (label,
 * bar, done/total, rate, time left), cut to the terminal's width, coloured unless `NO_COLOR`,
 * and cleared when the work ends. Anywhere else, one plain line every `intervalMs` while a stage
 * runs (nothing for work shorter than that), never an escape sequence. It only writes: it
 * never keeps the process alive (its timer is unref'd) and never throws.
 */
export interface Progress {
  /** A new stage: what is being done (`Embedding`), its unit, and how much there is (unknown: no bar). */
  stage(label: string, options?: { unit?: string; total?: number }): void;
  /** How much of the stage is done, and its total when it changed. */
  update(done: number, total?: number): void;
  /** Lines written above the bar: the bar is cleared first and drawn again after. */
  readonly log: Log;
  /** Another bar takes the line (the model's download): ours is cleared and silent until the next stage. */
  hide(): void;
  /** Clears the bar and stops the timer. Idempotent. */
  stop(): void;
}

export interface ProgressStage {
  label: string;
  unit: string;
  total: number | undefined;
  done: number;
  startedAt: number;
  /**
   * Where the rate is measured from: the first update with work done (what came before, a
   * model loading, a first batch warming up, is no rate), and how many updates moved it on since.
   */
  measured?: { at: number; done: number; samples: number };
}

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  const clock = options.clock ?? realClock;
  const terminal = terminalOf(stream, options.env ?? process.env);
  const paint = paintFor(terminal);
  const intervalMs = options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  // createLog also guards the stream: an EPIPE on stderr is swallowed, never thrown.
  const lines = createLog(stream);
  const raw = (text: string): void => {
    try {
      if (!stream.destroyed && !stream.writableEnded) stream.write(text);
    } catch {
      // Best effort, as every stderr write.
    }
  };
  let current: ProgressStage | undefined;
  let drawn = false;
  let lastDraw = Number.NEGATIVE_INFINITY;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let hidden = false;

  const clear = (): void => {
    if (drawn) raw('\r\x1b[K');
    drawn = false;
  };
  const draw = (): void => {
    if (current === undefined || stopped || hidden) return;
    lastDraw = clock.now();
    raw(`\r${barLine(current, clock.now(), terminal.width(), paint)}\x1b[K`);
    drawn = true;
  };
  const tick = (): void => {
    timer = undefined;
    if (stopped || current === undefined) return;
    if (!hidden) lines.line(plainLine(current, clock.now()));
    timer = clock.setTimeout(tick, intervalMs, { unref: true });
  };

  return {
    stage(label, stageOptions = {}) {
      if (stopped) return;
      hidden = false;
      current = { label, unit: stageOptions.unit ?? '', total: stageOptions.total, done: 0, startedAt: clock.now() };
      if (terminal.tty) draw();
      else timer ??= clock.setTimeout(tick, intervalMs, { unref: true });
    },
    update(done, total) {
      if (current === undefined || stopped) return;
      if (current.measured === undefined) {
        if (done > 0) current.measured = { at: clock.now(), done, samples: 0 };
      } else if (done > current.done) current.measured.samples++;
      current.done = done;
      if (total !== undefined) current.total = total;
      if (terminal.tty && clock.now() - lastDraw >= REDRAW_MS) draw();
    },
    log: {
      line(text) {
        clear();
        // Stopped, on a terminal where a bar was drawn: the line clears the line it starts on
        // itself. A Ctrl-C makes the terminal discard output not yet shown (no NOFLSH), and
        // the second key of a double Ctrl-C can take the bar's clear with it, leaving the bar
        // on the screen under the interrupted line (test/e2e/interrupt-add.test.ts saw it).
        lines.line(stopped && terminal.tty && lastDraw > Number.NEGATIVE_INFINITY ? `\r\x1b[K${text}` : text);
        if (terminal.tty) draw();
      },
      warn(text) {
        clear();
        lines.warn(text);
        if (terminal.tty) draw();
      },
    },
    hide() {
      clear();
      hidden = true;
    },
    stop() {
      if (stopped) return;
      clear();
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * `Embedding  [██████░░░░]  1,234/5,272 chunks  84.7/s  48s left`, at most `width - 1` columns
 * (a line as wide as the terminal wraps, and `\r` no longer returns to its start). When room is
 * short the numbers are kept first, then a bar of at least 10, then the label, cut with `…`.
 */
export function barLine(stage: ProgressStage, now: number, width: number, paint = paintFor({ colour: false })): string {
  const room = width - 1;
  if (stage.total === undefined) return fitWidth(uncounted(stage), room);
  const counts = `${count(stage.done)}/${count(stage.total)}${stage.unit ? ` ${stage.unit}` : ''}`;
  const speed = pace(stage, now);
  const tail = [counts, speed && `${speed.rate}/s`, speed?.left && `${speed.left} left`].filter(Boolean).join('  ');
  const beside = room - tail.length - 2;
  if (beside < LABEL_MIN) return fitWidth(tail, room);
  if (beside < LABEL_MIN + BAR_MIN + 4) return `${fitWidth(paint.bold(stage.label), beside)}  ${tail}`;
  const label = fitWidth(stage.label, Math.min(stage.label.length, beside - BAR_MIN - 4));
  const barWidth = Math.min(BAR_MAX, beside - label.length - 4);
  const filled = stage.total > 0 ? Math.round((Math.min(stage.done, stage.total) / stage.total) * barWidth) : 0;
  const bar = paint.cyan('█'.repeat(filled)) + paint.dim('░'.repeat(barWidth - filled));
  return `${paint.bold(label)}  [${bar}]  ${tail}`;
}

/** `Embedding: 1,234/5,272 chunks (23%), 84.7 chunks/s, about 48s left`: no escapes, no width. */
export function plainLine(stage: ProgressStage, now: number): string {
  if (stage.total === undefined) return uncounted(stage);
  const unit = stage.unit ? ` ${stage.unit}` : '';
  const percent = stage.total > 0 ? ` (${Math.floor((Math.min(stage.done, stage.total) / stage.total) * 100)}%)` : '';
  const speed = pace(stage, now);
  const rate = speed ? `, ${speed.rate}${unit}/s` : '';
  const left = speed?.left ? `, about ${speed.left} left` : '';
  return `${stage.label}: ${count(stage.done)}/${count(stage.total)}${unit}${percent}${rate}${left}`;
}

/** A stage whose total is not known: `Listing notes…`, or `Chunking notes… 1,200 notes`. */
function uncounted(stage: ProgressStage): string {
  return stage.done > 0
    ? `${stage.label}… ${count(stage.done)}${stage.unit ? ` ${stage.unit}` : ''}`
    : `${stage.label}…`;
}

/**
 * The mean rate since the stage's first work done, and the time left at that rate; nothing
 * until it has been measured for a second over a few updates (`RATE_AFTER_MS`, `RATE_SAMPLES`).
 */
function pace(stage: ProgressStage, now: number): { rate: string; left?: string } | undefined {
  const measured = stage.measured;
  if (measured === undefined) return undefined;
  const elapsed = now - measured.at;
  const done = stage.done - measured.done;
  if (elapsed < RATE_AFTER_MS || measured.samples < RATE_SAMPLES || done <= 0) return undefined;
  const perSecond = done / (elapsed / 1000);
  const rate = perSecond >= 100 ? count(Math.round(perSecond)) : perSecond.toFixed(1);
  if (stage.total === undefined || stage.done >= stage.total) return { rate };
  return { rate, left: duration((stage.total - stage.done) / perSecond) };
}

/** `1,234,567`: the same on every machine, whatever its locale. */
export function count(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `48s`, `3m 12s`, `2h 05m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
