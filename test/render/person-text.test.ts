import { expect, test } from "bun:test";
import { compilePolicy, decide } from "../../core/policy/policy.ts";
import { forPerson } from "../../render/person-text.ts";
import { tempDir } from "../support/temp.ts";
import { join } from "node:path";

// Table-driven over the policy's real reasons: what the person reads holds no
// instruction meant for the model.

test.each([
  [
    "Reading .env files is never allowed: secrets stay out of the model's context. Ask the user to paste the values you need (a .env.example with placeholders is readable).",
    "Reading .env files is never allowed: secrets stay out of the model's context.",
  ],
  [
    "Running a command needs the user's approval unless a Run(...) allow rule covers it. If it is refused, do without it or ask the user to run it.",
    "Running a command needs your approval unless a Run(...) allow rule covers it.",
  ],
  [
    "Writing inside .git is never allowed: repository metadata changes only through git commands the user runs. Edit the working-tree files instead.",
    "Writing inside .git is never allowed: repository metadata changes only through git commands you run.",
  ],
  [
    "The command is empty: give the command line to run, e.g. bun test.",
    "The command is empty: give the command line to run, e.g. bun test.",
  ],
  [
    "Error: permission denied for read of .env. Reading .env files is never allowed.",
    "permission denied for read of .env.",
  ],
])("%s", (reason, shown) => {
  expect(forPerson(reason)).toBe(shown);
});

test("no reason the policy gives tells the person to do what the model should", () => {
  const root = tempDir();
  const home = tempDir();
  const policy = compilePolicy({ workspaceRoot: root, home, pencilHome: join(home, ".pencil"), rules: [] });
  const reasons = [
    decide(policy, { tool: "t", access: "read", real: join(root, ".env") }),
    decide(policy, { tool: "t", access: "write", real: join(root, ".env") }),
    decide(policy, { tool: "t", access: "read", real: join(home, ".ssh/id_rsa") }),
    decide(policy, { tool: "t", access: "run", command: "make" }),
    decide(policy, { tool: "t", access: "run", command: "make && curl x" }),
    decide(policy, { tool: "t", access: "read", real: "/etc/hosts" }),
    decide(policy, { tool: "t", access: "write", real: join(root, ".git/config") }),
  ].map((d) => forPerson(d.reason));
  for (const text of reasons) {
    expect(text).not.toMatch(/Ask the user|Tell the user|If it is refused|do without it|instead\./);
    expect(text.length).toBeGreaterThan(10);
  }
});
