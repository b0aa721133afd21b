import { BrainStoreError, type BrainStore } from "./store.ts";

/** The hosted store on InsForge (filled in by the InsForge step). */
export class InsforgeStore {
  static async connect(_baseUrl: string, _anonKey: string, _fetch?: typeof fetch): Promise<BrainStore> {
    throw new BrainStoreError("The InsForge brain store is not available in this build yet; unset INSFORGE_BASE_URL and INSFORGE_ANON_KEY to use the embedded store.");
  }
}
