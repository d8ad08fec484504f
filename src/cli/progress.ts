// How far `admin import` has got, on stderr: a bar redrawn in place on a terminal, plain
// lines every few seconds otherwise (a log, a CI job), so that a long import is never
// silent. Rates and time left are per pass: the check reads the whole file first (its
// time left from the bytes read), the write reads it again (from the lines, known by then).
import type { Clock } from "../clock.js";
import type { ImportProgress } from "../import/import.service.js";

export interface ProgressOutput {
  write(text: string): void;
  /** The terminal's width when stderr is one; undefined otherwise. */
  columns: number | undefined;
}

/** A bar is redrawn at most this often; a plain line is written this often. */
const REDRAW_MS = 100;
export const PLAIN_LINE_MS = 10_000;

const count = (n: number) => n.toLocaleString("en-US");

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

interface Figures {
  done: string;
  fraction: number;
  rate: string;
  left: string;
}

function figuresOf(p: ImportProgress, elapsedMs: number): Figures {
  const seconds = Math.max(elapsedMs, 1) / 1000;
  const rate = `${count(Math.round(p.lines / seconds))} lines/s`;
  const fraction = p.phase === "check" || p.totalLines === null ? p.bytes / Math.max(p.totalBytes, 1) : p.lines / Math.max(p.totalLines, 1);
  const left = fraction > 0 ? duration((elapsedMs / fraction) * (1 - fraction)) : "?";
  const done =
    p.phase === "check"
      ? `checked ${count(p.lines)} lines`
      : `wrote ${count(p.written)} of ${count((p.totalLines ?? 0) - p.unchanged)} lines${p.unchanged > 0 ? `, ${count(p.unchanged)} unchanged` : ""}`;
  return { done, fraction: Math.min(1, fraction), rate, left };
}

export interface ProgressReporter {
  update(progress: ImportProgress): void;
  /** Shows the last figures, as the import has ended. */
  finish(): void;
  /** Ends the bar's line, so that what follows (an error) starts on a line of its own. */
  end(): void;
}

export function importProgressReporter(out: ProgressOutput, clock: Clock): ProgressReporter {
  let phase: ImportProgress["phase"] | null = null;
  let phaseStart = 0;
  let lastShown = Number.NEGATIVE_INFINITY;
  let last: ImportProgress | null = null;
  let drawn = false;

  const plain = (p: ImportProgress, now: number) => {
    const f = figuresOf(p, now - phaseStart);
    out.write(`import: ${f.done} (${Math.floor(f.fraction * 100)}%), ${f.rate}, ${f.left} left\n`);
  };
  const bar = (p: ImportProgress, now: number) => {
    const f = figuresOf(p, now - phaseStart);
    const label = p.phase === "check" ? "Checking" : "Writing ";
    const text = `${f.done}  ${f.rate}  ${f.left} left`;
    const columns = out.columns ?? 80;
    const width = Math.max(10, Math.min(30, columns - 72));
    const filled = Math.round(f.fraction * width);
    const line = `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(Math.floor(f.fraction * 100)).padStart(3)}%  ${text}`;
    out.write(`\r${line.slice(0, columns - 1).padEnd(columns - 1)}`);
    drawn = true;
  };
  const show = (p: ImportProgress, now: number) => {
    if (out.columns !== undefined) bar(p, now);
    else plain(p, now);
    lastShown = now;
  };

  return {
    update(p) {
      const now = clock.now();
      if (p.phase !== phase) {
        // The check's last figures stay on screen above the write's.
        if (last && phase !== null) {
          show(last, now);
          if (out.columns !== undefined) out.write("\n");
        }
        phase = p.phase;
        phaseStart = now;
        lastShown = now;
      }
      last = p;
      if (now - lastShown >= (out.columns !== undefined ? REDRAW_MS : PLAIN_LINE_MS)) show(p, now);
    },
    finish() {
      if (last) show(last, clock.now());
      this.end();
    },
    end() {
      if (drawn) out.write("\n");
      drawn = false;
    },
  };
}
