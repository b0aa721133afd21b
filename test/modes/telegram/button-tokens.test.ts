import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ButtonTokens, CALLBACK_PREFIX } from "../../../modes/telegram/button-tokens.ts";
import { tempDir } from "../../support/temp.ts";

const OWNER = 4242;
const binding = (subject = "c-1", item = "a.txt") => ({
  action: "approve" as const,
  subject,
  item,
  digest: "d1",
  owner: OWNER,
});

describe("button tokens", () => {
  test("callback data is short, random, and resolves only for the owner it was issued to", () => {
    const tokens = new ButtonTokens(null);
    const [data, other] = tokens.issue([binding(), binding("c-1", "b.txt")]);
    expect(data!.startsWith(CALLBACK_PREFIX)).toBe(true);
    expect(Buffer.byteLength(data!)).toBeLessThanOrEqual(64);
    expect(data).not.toBe(other);
    expect(data).not.toContain("a.txt"); // the data names nothing; the binding stays on the server
    const resolved = tokens.resolve(data, OWNER)!;
    expect({
      action: resolved.action,
      subject: resolved.subject,
      item: resolved.item,
      digest: resolved.digest,
    }).toEqual({ action: "approve", subject: "c-1", item: "a.txt", digest: "d1" });
    expect(tokens.resolve(data, OWNER + 1)).toBeNull();
  });

  test("forged, malformed and revoked data resolve to nothing and change nothing", () => {
    const tokens = new ButtonTokens(null);
    const [data] = tokens.issue([binding()]);
    const before = tokens.size;
    for (const forged of [
      undefined,
      "",
      "p1:",
      "p1:AAAAAAAAAAAAAAAA",
      `${data}x`,
      data!.toUpperCase(),
      "x".repeat(5000),
      "p1:../../etc/passwd00",
    ]) {
      expect(tokens.resolve(forged, OWNER)).toBeNull();
    }
    expect(tokens.size).toBe(before);
    tokens.revoke(tokens.resolve(data, OWNER)!.token);
    expect(tokens.resolve(data, OWNER)).toBeNull(); // a replay after the press acted
  });

  test("tokens persist atomically and survive a restart; the store is bounded", () => {
    const file = join(tempDir(), "telegram", "tokens.json");
    const first = new ButtonTokens(file, 5);
    const data = first.issue([1, 2, 3, 4, 5, 6, 7].map((i) => binding("c-1", `f${i}.txt`)));
    expect(first.size).toBe(5);
    const second = new ButtonTokens(file, 5);
    expect(second.resolve(data[0], OWNER)).toBeNull(); // the oldest went first
    expect(second.resolve(data[6], OWNER)!.item).toBe("f7.txt");
    second.revokeSubject("c-1");
    expect(new ButtonTokens(file, 5).size).toBe(0);
  });

  test("retiring a card's buttons with its subject forgets its other tokens too, and a restart remembers both", () => {
    const file = join(tempDir(), "telegram", "tokens.json");
    const tokens = new ButtonTokens(file);
    const [onCard, hunk] = tokens.issue([binding("c-1", "a.txt"), binding("c-1", "hunk")]);
    const [other] = tokens.issue([binding("c-2", "b.txt")]);
    tokens.retire([onCard!], "already decided", 7, "c-1");
    const after = new ButtonTokens(file);
    expect(after.resolve(onCard, OWNER)).toBeNull();
    expect(after.resolve(hunk, OWNER)).toBeNull(); // not on the card, same subject: gone in the same save
    expect(after.retiredAnswer(onCard)).toEqual({ answer: "already decided", messageId: 7 });
    expect(after.retiredAnswer(hunk)).toBeNull(); // only what the card showed answers as retired
    expect(after.resolve(other, OWNER)!.item).toBe("b.txt");
  });

  test("a damaged token file starts empty and says so", () => {
    const file = join(tempDir(), "tokens.json");
    writeFileSync(file, "{not json");
    const problems: string[] = [];
    const tokens = new ButtonTokens(file, 10, (m) => problems.push(m));
    expect(tokens.size).toBe(0);
    expect(problems[0]).toContain("not valid JSON");
  });
});
