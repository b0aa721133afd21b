import { createCreateFileTool } from "../core/tools/create-file.ts";
import { createDeleteFileTool } from "../core/tools/delete-file.ts";
import { createEditFileTool } from "../core/tools/edit-file.ts";
import { createListFilesTool } from "../core/tools/list-files.ts";
import { createReadFileTool } from "../core/tools/read-file.ts";
import { createSearchTool } from "../core/tools/search.ts";
import type { PencilTool } from "../core/tools/tool.ts";
import { createWriteFileTool } from "../core/tools/write-file.ts";
import type { RunMode } from "../agent/prompts.ts";

/** The read-only tools every mode has. */
export function readTools(): PencilTool[] {
  return [createReadFileTool(), createListFilesTool(), createSearchTool()];
}

/** The tools of a mode: agent adds the staging write tools; plan and ask stay read-only (plan's extras are added by the plan flow). */
export function toolsFor(mode: RunMode): PencilTool[] {
  if (mode !== "agent") return readTools();
  return [...readTools(), createCreateFileTool(), createEditFileTool(), createWriteFileTool(), createDeleteFileTool()];
}
