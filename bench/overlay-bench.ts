// Stage and read back 1,000 files of 10 KB through the overlay (target ≤ 50 ms),
// and the overlay's memory against the staged bytes (target ≤ 2×).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskFileOps } from "../core/file-ops.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { median, ms, target, timeRuns } from "./stats.ts";

const FILES = 1000;
const SIZE = 10 * 1024;
const root = mkdtempSync(join(tmpdir(), "pencil-overlay-bench-"));
const paths = Array.from({ length: FILES }, (_, i) => join(root, `dir${i % 20}`, `file${i}.ts`));
const contents = paths.map((_, i) => new TextEncoder().encode(`// file ${i}\n`.padEnd(SIZE, "x")));
const origin = { tool: "create_file", callId: "c", model: "bench", readsBefore: [] as string[] };

function stageAndRead(): Overlay {
  const overlay = new Overlay(new DiskFileOps());
  for (let i = 0; i < FILES; i++) overlay.writeBytes(paths[i]!, contents[i]!, { origin });
  let total = 0;
  for (const p of paths) total += overlay.readBytes(p).length;
  if (total !== FILES * SIZE) throw new Error("read back the wrong bytes");
  return overlay;
}

function baseline(): void {
  const map = new Map<string, Uint8Array>();
  for (let i = 0; i < FILES; i++) map.set(paths[i]!, contents[i]!);
  let total = 0;
  for (const p of paths) total += map.get(p)!.length;
  if (total !== FILES * SIZE) throw new Error("baseline read back the wrong bytes");
}

const overlayTimes = await timeRuns(9, stageAndRead, 3);
const baseTimes = await timeRuns(9, baseline);

// Memory: the overlay's own footprint, with content the overlay was handed fresh (as a tool would).
Bun.gc(true);
const before = process.memoryUsage();
const fresh = contents.map((c) => c.slice());
const overlay = new Overlay(new DiskFileOps());
for (let i = 0; i < FILES; i++) overlay.writeBytes(paths[i]!, fresh[i]!, { origin });
Bun.gc(true);
const after = process.memoryUsage();
const used = after.heapUsed + (after.arrayBuffers ?? 0) - (before.heapUsed + (before.arrayBuffers ?? 0));
const staged = overlay.stagedBytes();
const ratio = used / staged;

const m = median(overlayTimes);
console.log(
  `overlay: stage + read back ${FILES} × 10 KB: median ${ms(m)} (baseline Map: ${ms(median(baseTimes))}, ${(m / median(baseTimes)).toFixed(1)}×)`,
);
target({
  name: "overlay: stage + read back 1,000 × 10 KB",
  value: m,
  unit: "ms",
  max: 50,
  baseline: { name: "a plain Map", value: median(baseTimes) },
});
console.log(`overlay memory: ${(used / 1e6).toFixed(2)} MB for ${(staged / 1e6).toFixed(2)} MB staged`);
target({ name: "overlay memory over the staged bytes", value: ratio, unit: "×", max: 2 });
rmSync(root, { recursive: true, force: true });
