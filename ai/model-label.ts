import type { SharedV4ProviderMetadata } from "@ai-sdk/provider";

/** Provider-metadata key under which Pencil records, on each step's finish, the model that produced it. */
export const PENCIL_METADATA_KEY = "pencil";

/** Returns `metadata` with `pencil.model` set to `label` (the other providers' entries kept). */
export function withModelLabel(metadata: SharedV4ProviderMetadata | undefined, label: string): SharedV4ProviderMetadata {
  return { ...metadata, [PENCIL_METADATA_KEY]: { model: label } };
}

/** The model label recorded in a step's provider metadata (`step.providerMetadata`), or undefined when there is none. */
export function modelLabelOf(providerMetadata: unknown): string | undefined {
  if (typeof providerMetadata !== "object" || providerMetadata === null) return undefined;
  if (!Object.hasOwn(providerMetadata, PENCIL_METADATA_KEY)) return undefined;
  const entry = (providerMetadata as Record<string, unknown>)[PENCIL_METADATA_KEY];
  if (typeof entry !== "object" || entry === null || !Object.hasOwn(entry, "model")) return undefined;
  const model = (entry as Record<string, unknown>).model;
  return typeof model === "string" ? model : undefined;
}
