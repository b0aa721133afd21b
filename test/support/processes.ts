import { readdirSync, readFileSync } from "node:fs";

/** Host pids whose command line is exactly `args` (NUL-separated in /proc), zombies left out: what is still running. */
export function pidsRunning(args: string[]): number[] {
  const want = `${args.join("\0")}\0`;
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (
        readFileSync(`/proc/${name}/cmdline`, "utf8") === want &&
        !/\) Z/.test(readFileSync(`/proc/${name}/stat`, "utf8"))
      )
        out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
