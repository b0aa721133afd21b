import { join } from "node:path";
import { createApplyPatchTool } from "../tools/apply-patch.ts";
import { createCreateFileTool } from "../tools/create-file.ts";
import { createDeleteFileTool } from "../tools/delete-file.ts";
import { createEditFileTool } from "../tools/edit-file.ts";
import { createFetchUrlTool } from "../tools/web/fetch-url.ts";
import { createListFilesTool } from "../tools/list-files.ts";
import { createReadFileTool } from "../tools/read-file.ts";
import { createRunCommandTool } from "../tools/run-command.ts";
import { createSearchTool } from "../tools/search.ts";
import type { PencilTool } from "../tools/tool.ts";
import { createRecallTool } from "../tools/recall.ts";
import { brainRecall } from "../brain/recall-search.ts";
import { webSearchToolFromEnv } from "../tools/web/web-search.ts";
import { createWriteFileTool } from "../tools/write-file.ts";
import type { RunMode } from "../agent/prompts.ts";
import type { Runtime } from "./runtime.ts";

/** The read-only workspace tools every mode has. */
function readTools(): PencilTool[] {
  return [createReadFileTool(), createListFilesTool(), createSearchTool()];
}

/**
 * The tools of a mode (README "Commands", its table): every mode has recall (the owner's notes); agent adds the staging write tools and
 * run_command (in a scratch copy; its file effects come back staged); plan and
 * ask stay read-only and add fetch_url, and web_search when FIRECRAWL_API_KEY is set.
 */
export function toolsFor(mode: RunMode, runtime: Pick<Runtime, "env" | "pencilHome" | "settings">): PencilTool[] {
  // recall (the owner's notes, read-only) in every mode; the brain lives under the same PENCIL_HOME.
  const recall = createRecallTool(brainRecall({ ...runtime.env, PENCIL_HOME: runtime.pencilHome }));
  if (mode === "agent") {
    return [
      ...readTools(),
      recall,
      createCreateFileTool(),
      createEditFileTool(),
      createWriteFileTool(),
      createDeleteFileTool(),
      // The patch format gpt-oss (Groq's default) is trained on; staged like edit_file.
      createApplyPatchTool(),
      createRunCommandTool({
        pencilHome: runtime.pencilHome,
        network: runtime.settings.sandbox.network,
        envSettings: runtime.settings.sandbox.env,
        // The first command of a process checks the last one's toolchain searches instead of searching again.
        indexDir: join(runtime.pencilHome, "cache", "sandbox-index"),
        // The proxy (node:http, node:https, node:tls and node:dns: ~15 ms of a start) loads when a command first needs the network.
        startProxy: async (options) => (await import("../net/command-proxy.ts")).startCommandProxy(options),
        timeoutMs: runtime.settings.limits.commandSeconds * 1000,
        timeoutCapMs: runtime.settings.limits.commandSecondsMax * 1000,
      }),
    ];
  }
  const search = webSearchToolFromEnv({ ...runtime.env });
  return [...readTools(), recall, createFetchUrlTool(), ...(search ? [search] : [])];
}
