/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `fn` `runs` times and returns each duration in milliseconds. */
export async function timeRuns(runs: number, fn: () => unknown | Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** `12.3 ms`. */
export function ms(n: number): string {
  return `${n.toFixed(1)} ms`;
}

/** `MET` or `NOT MET`, for the closing line of a benchmark. */
export function verdict(ok: boolean): string {
  return ok ? "MET" : "NOT MET";
}

/** Milliseconds one synchronous call of `fn` takes. */
export function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
