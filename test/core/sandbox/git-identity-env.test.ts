import { expect, test } from "bun:test";
import { commandEnv, looksSecret } from "../../../core/sandbox/command-env.ts";

// The owner's git identity set in the environment reaches commands: AUTHOR is not AUTH.
test("GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL reach a command; credential-looking git variables do not", () => {
  expect(looksSecret("GIT_AUTHOR_NAME")).toBe(false);
  expect(looksSecret("GIT_AUTHOR_EMAIL")).toBe(false);
  expect(looksSecret("GIT_ASKPASS_TOKEN")).toBe(true);
  expect(looksSecret("GIT_AUTH_TOKEN")).toBe(true);
  const env = commandEnv(
    {
      PATH: "/usr/bin:/bin",
      GIT_AUTHOR_NAME: "Ada Owner",
      GIT_AUTHOR_EMAIL: "ada@example.com",
      GIT_COMMITTER_NAME: "Ada Owner",
      GIT_AUTH_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    },
    { home: "/tmp/h", tmp: "/tmp/t" },
  );
  expect(env.GIT_AUTHOR_NAME).toBe("Ada Owner");
  expect(env.GIT_AUTHOR_EMAIL).toBe("ada@example.com");
  expect(env.GIT_COMMITTER_NAME).toBe("Ada Owner");
  expect(env.GIT_AUTH_TOKEN).toBeUndefined();
});
