import { expect, test } from "bun:test";
import { Api, HttpError } from "grammy";
import { NETWORK_RETRIES, networkRetry } from "../../../modes/telegram/api-retries.ts";
import { DEFAULT_TIMEOUTS } from "../../../modes/telegram/api-timeouts.ts";
import { Outbox } from "../../../modes/telegram/outbox.ts";

// One place decides each failed send of a card: networkRetry tries again a request that never left, the outbox sends
// again one whose outcome is unknown (a second copy is harmless, no card is not). Neither repeats the other's tries.

const quick = { ...DEFAULT_TIMEOUTS, retryBaseSeconds: 0.001, retryCapSeconds: 0.001 };

/** An Api behind networkRetry whose every sendMessage fails on the network with `code`; counts the tries. */
function failingApi(code: string): { api: Api; tries: () => number } {
  let tries = 0;
  const api = new Api("123:test", { apiRoot: "http://127.0.0.1:9" });
  api.config.use(async (prev, method, payload, signal) => {
    if (method !== "sendMessage") return prev(method, payload, signal);
    tries += 1;
    throw new HttpError("Network request failed!", Object.assign(new TypeError(code), { code }));
  });
  api.config.use(networkRetry(quick));
  return { api, tries: () => tries };
}

test("a card whose request never left is tried again by networkRetry only, not sent again by the outbox on top", async () => {
  const { api, tries } = failingApi("ECONNREFUSED");
  const logs: string[] = [];
  const outbox = new Outbox(api, (l) => logs.push(l), 0.001);
  await expect(outbox.sendAgainIfUnknown(1, "card")).rejects.toBeInstanceOf(HttpError);
  expect(tries()).toBe(NETWORK_RETRIES + 1);
  expect(logs.some((l) => l.includes("sending it again"))).toBe(false);
});

test("a card whose connection broke after it left is sent again by the outbox (twice more), never by networkRetry", async () => {
  const { api, tries } = failingApi("ECONNRESET");
  const logs: string[] = [];
  const outbox = new Outbox(api, (l) => logs.push(l), 0.001);
  await expect(outbox.sendAgainIfUnknown(1, "card")).rejects.toBeInstanceOf(HttpError);
  expect(tries()).toBe(3);
  expect(logs.filter((l) => l.includes("outcome is unknown") && l.includes("sending it again")).length).toBe(2);
});
