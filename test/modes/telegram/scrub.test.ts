import { describe, expect, test } from "bun:test";
import { errorText, scrubToken } from "../../../modes/telegram/scrub.ts";

const TOKEN = "123456:TEST-token_abcdefghijklmnop";

describe("token scrubbing", () => {
  test("the token, its secret half and its URL-encoded form never survive into text", () => {
    const secret = TOKEN.slice(TOKEN.indexOf(":") + 1);
    const text = `GET http://x/bot${TOKEN}/getMe ${encodeURIComponent(TOKEN)} ${secret}`;
    const scrubbed = scrubToken(text, TOKEN);
    expect(scrubbed).not.toContain(secret);
    expect(scrubbed).toContain("<token>");
    const nested = new Error("Network request for 'getMe' failed!", {
      cause: new Error(`request to http://127.0.0.1/bot${TOKEN}/getMe failed`),
    });
    expect(errorText(nested, TOKEN)).toBe(
      "Network request for 'getMe' failed! ← request to http://127.0.0.1/bot<token>/getMe failed",
    );
  });
});
