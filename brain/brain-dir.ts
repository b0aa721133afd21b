import { join } from "node:path";

/** The embedded brain's directory under PENCIL_HOME. */
export function brainDir(pencilHome: string): string {
  return join(pencilHome, "brain");
}
