import type { SharedV4ProviderMetadata } from "@ai-sdk/provider";

/** Provider-metadata key under which Pencil records, on each step's finish, the model that produced it. */
const PENCIL_METADATA_KEY = "pencil";

/** Returns `metadata` with `pencil.model` set to `label` (the other providers' entries kept). */
export function withModelLabel(
  metadata: SharedV4ProviderMetadata | undefined,
  label: string,
): SharedV4ProviderMetadata {
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

/** The price in dollars a provider reported for a step (OpenRouter's `usage.cost`), or undefined when it reported none. */
export function reportedCostOf(providerMetadata: unknown): number | undefined {
  const usage = ownObject(ownObject(providerMetadata, "openrouter"), "usage");
  const cost = usage && Object.hasOwn(usage, "cost") ? usage.cost : undefined;
  return typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : undefined;
}

function ownObject(value: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>) : undefined;
}
