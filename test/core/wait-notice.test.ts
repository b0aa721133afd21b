import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { tellWaitsTo, toldIfSlow, waitClock } from "../../core/wait-notice.ts";
import { PgliteStore } from "../../brain/pglite-store.ts";
import { givePristineBrain } from "../support/pristine-brain.ts";
import { tempDir } from "../support/temp.ts";

let stop = () => {};
afterEach(() => stop());

function listen(afterMs?: number): string[] {
  const lines: string[] = [];
  stop = tellWaitsTo((line) => lines.push(line), afterMs === undefined ? {} : { afterMs });
  return lines;
}

test("a wait that ends within the second says nothing; a longer one says what it waits on, once", async () => {
  const lines = listen();
  expect(
    await toldIfSlow(
      () => "quick",
      Bun.sleep(20).then(() => 1),
    ),
  ).toBe(1);
  expect(lines).toEqual([]);
  await toldIfSlow(() => "the slow one", Bun.sleep(1150));
  expect(lines).toEqual(["the slow one"]);
});

test("a polled wait tells on the first round past the second, once; with no listener nothing is told", () => {
  let now = 0;
  const lines = listen();
  const tick = waitClock(
    () => `round at ${now}`,
    () => now,
  );
  for (now = 0; now <= 3000; now += 250) tick();
  expect(lines).toEqual(["round at 1000"]);
  // Stopped: a wait that would be told now reaches nobody.
  stop();
  let later = 0;
  const untold = waitClock(
    () => "nobody hears",
    () => later,
  );
  later = 5000;
  untold();
  expect(lines).toEqual(["round at 1000"]);
});

test("the brain's database says it is starting when the start is slow (every wait told here)", async () => {
  const home = tempDir("pencil-brain-");
  await givePristineBrain(home);
  const lines = listen(0);
  const store = await PgliteStore.open(join(home, "brain"));
  await store.close();
  expect(lines.some((l) => l.includes("Starting the brain's database (PGlite") && l.includes("Ctrl-C to stop"))).toBe(
    true,
  );
}, 30_000);
