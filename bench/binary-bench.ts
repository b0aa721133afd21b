// The single executable beside the same commands from source, in one run: `pencil --help` and `--version` (target
// ≤ 10 ms), `pencil agent` from start to the first model request (≤ 80 ms, seen by a fake model server on 127.0.0.1), and
// `pencil brain list` on a 1,000-note brain (reported); then the sizes of the executable and of the installed npm
// package. Wall time is given with the CPU time the process used (user + system), which a loaded machine inflates less.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { PgliteStore } from "../brain/pglite-store.ts";
import pkg from "../package.json" with { type: "json" };
import { startFakeOpenAIServer, textReply } from "../test/support/fake-openai-server.ts";
import { median, ms, type SpawnTimes, target, timeSpawns, untilFirstRequest } from "./stats.ts";

const ROOT = join(import.meta.dir, "..");
const RUNS = 21;
const STARTS = 11;
const BRAIN_RUNS = 7;
const out = join(ROOT, "bench/.out");
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "pencil-binary-bench-"));
const home = join(work, "home");
const empty = join(work, "empty");
mkdirSync(home);
mkdirSync(empty);

// The executable, built now from this checkout, and the smallest program compiled the same way: Bun's own floor.
const binary = join(out, "pencil");
const build = spawnSync(process.execPath, [join(ROOT, "scripts/build-binary.ts"), `--outfile=${binary}`], {
  encoding: "utf8",
});
if (build.status !== 0) throw new Error(`build:binary failed:\n${build.stderr}`);
console.log(build.stdout.trim());
const hello = join(work, "hello.ts");
writeFileSync(hello, 'await Bun.write(Bun.stdout, "ok\\n");\n');
const floorBinary = join(out, "hello");
spawnSync(process.execPath, ["build", "--compile", "--bytecode", "--format=esm", hello, "--outfile", floorBinary]);

const SOURCE = [process.execPath, join(ROOT, "index.ts")];
const LAUNCHER = [join(ROOT, "bin/pencil")];
const BINARY = [binary];
const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1" };

type Timing = SpawnTimes;
/** Runs the commands in turns (after two warm-ups of each), so a change in the machine's load falls on all alike. */
const measure = (argvs: string[][], runs: number) => timeSpawns(argvs, runs, { cwd: empty, env });
const fmt = (t: Timing) => `median ${ms(median(t.wall))} (CPU ${ms(median(t.cpu))})`;

// (1) --help and --version.
const [helpBinary, versionBinary, floor, helpSource, helpLauncher, bare] = measure(
  [
    [...BINARY, "--help"],
    [...BINARY, "--version"],
    [floorBinary],
    [...SOURCE, "--help"],
    [...LAUNCHER, "--help"],
    [process.execPath, "-e", ""],
  ],
  RUNS,
) as [Timing, Timing, Timing, Timing, Timing, Timing];
const h = median(helpBinary.wall);
const v = median(versionBinary.wall);
const overFloor = (t: number) => `${ms(t - median(floor.wall))} over the floor`;
console.log(`binary --help: ${fmt(helpBinary)}, ${overFloor(h)}`);
console.log(`binary --version: ${fmt(versionBinary)}, ${overFloor(v)}`);
console.log(
  `  from source, bun index.ts --help: ${fmt(helpSource)} (${(median(helpSource.wall) / h).toFixed(2)}× the binary)`,
);
console.log(`  from a clone or the npm package, bin/pencil --help: ${fmt(helpLauncher)}`);
console.log(`  floor, the smallest program compiled the same way: ${fmt(floor)}; bare bun -e "": ${fmt(bare)}`);
const floorWall = { name: "the smallest program compiled the same way", value: median(floor.wall) };
target({ name: "the binary's --help", value: h, unit: "ms", max: 10, baseline: floorWall });
target({ name: "the binary's --version", value: v, unit: "ms", max: 10, baseline: floorWall });

// (2) agent: start → first model request.
const server = await startFakeOpenAIServer();
const modelEnv = { GROQ_API_KEY: "gsk_bench", GROQ_BASE_URL: `${server.url}/openai/v1` };
const workspace = join(work, "ws");
mkdirSync(workspace);
writeFileSync(join(workspace, "a.txt"), "alpha\n");

const firstRequest = (argv: string[]) =>
  untilFirstRequest([...argv, "agent", "say ok", "-w", workspace], {
    cwd: workspace,
    env: { ...env, ...modelEnv },
    requests: () => server.requests.length,
    enqueue: () => server.enqueue(textReply("ok")),
  });
const agentBinary: number[] = [];
const agentSource: number[] = [];
await firstRequest(BINARY);
await firstRequest(SOURCE);
for (let i = 0; i < STARTS; i++) {
  agentBinary.push(await firstRequest(BINARY));
  agentSource.push(await firstRequest(SOURCE));
}
await server.stop();
const a = median(agentBinary);
console.log(`binary agent, start → first model request: median ${ms(a)}`);
console.log(
  `  from source, bun index.ts agent: median ${ms(median(agentSource))} (${(median(agentSource) / a).toFixed(2)}× the binary)`,
);
target({
  name: "the binary's agent, start → first model request",
  value: a,
  unit: "ms",
  max: 80,
  baseline: { name: "from source", value: median(agentSource) },
});

// (3) brain list on 1,000 notes, on disk.
const pencilHome = join(home, ".pencil");
const store = await PgliteStore.open(join(pencilHome, "brain"));
const ids = Array.from({ length: 1000 }, (_, i) => i);
await store.database.query(
  `insert into brain_notes (kind, content, title, tags, summary, enriched_by) select 'text', c, t, '{bench}', '', 'scripted' from unnest($1::text[], $2::text[]) as u(c, t)`,
  [ids.map((i) => `Note ${i}: something worth keeping, number ${i}.`), ids.map((i) => `Note ${i}`)],
);
await store.close();
const [listBinary, listSource] = measure(
  [
    [...BINARY, "brain", "list"],
    [...SOURCE, "brain", "list"],
  ],
  BRAIN_RUNS,
) as [Timing, Timing];
console.log(`binary brain list, 1,000 notes: ${fmt(listBinary)} (reported, no target)`);
console.log(
  `  from source: ${fmt(listSource)} (${(median(listSource.wall) / median(listBinary.wall)).toFixed(2)}× the binary)`,
);

// (4) Sizes.
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(
  `size: the executable ${mib(statSync(binary).size)} (Bun's runtime is ${mib(statSync(process.execPath).size)} of it)`,
);
const noBun = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, "bun")) && !d.includes("node_modules"));
const npmEnv = { ...process.env, PATH: noBun.join(delimiter), npm_config_loglevel: "error" };
const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", work], {
  cwd: ROOT,
  env: npmEnv,
  encoding: "utf8",
});
if (pack.status === 0) {
  const [p] = JSON.parse(pack.stdout) as { filename: string; size: number; unpackedSize: number }[];
  const prefix = join(work, "prefix");
  const install = spawnSync(
    "npm",
    ["i", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(work, p!.filename)],
    { env: npmEnv, encoding: "utf8" },
  );
  let installed = "not installed (npm could not reach the registry or its cache)";
  if (install.status === 0) {
    let total = 0;
    const seen = new Set<number>();
    const dir = join(prefix, "lib/node_modules", pkg.name);
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!e.isFile()) continue;
      const st = statSync(join(e.parentPath, e.name));
      if (!seen.has(st.ino)) total += st.size;
      seen.add(st.ino);
    }
    installed = `${mib(total)} installed with its dependencies (Bun's binary ${mib(statSync(process.execPath).size)} of it)`;
  }
  console.log(`size: the npm package ${mib(p!.size)} packed, ${mib(p!.unpackedSize)} unpacked; ${installed}`);
}

rmSync(work, { recursive: true, force: true });
