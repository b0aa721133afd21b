/**
 * A byte count as people read it, in one style everywhere Pencil shows a size: `512 B`, `97.7 KB`,
 * `1.0 MB`, `256 KB`, `1.5 GB`. Units are powers of 1024; a figure under 100 keeps one decimal, a
 * larger one is whole (three figures are enough to judge a size).
 */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (Math.round(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 100 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
