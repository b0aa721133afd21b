import { createHash } from "node:crypto";

/** Hex SHA-256 of bytes or text: the identity of file contents everywhere in Pencil. */
export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
