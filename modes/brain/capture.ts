import type { ModelEnv } from "../../ai/model-specs.ts";
import { DumpRefused, type Capture } from "./brain.ts";

/** A web page as a note (filled in by the URL step). */
export async function captureUrl(url: string, _env: ModelEnv): Promise<Capture> {
  throw new DumpRefused(`Storing web pages (${url}) is not in this build yet. Paste the text instead.`);
}

/** A photo as a note (filled in by the photo step). */
export async function captureImage(path: string, _read: (path: string) => Buffer, _env: ModelEnv): Promise<Capture> {
  throw new DumpRefused(`Storing photos (${path}) is not in this build yet.`);
}
