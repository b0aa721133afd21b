// What a tool call declares before it runs, so the policy judges it first: the paths it touches and the
// requests a sandboxed command makes through the proxy.

/** Whether a tool call reads a path or writes (stages) it. */
type Access = "read" | "write";

/** A path a tool call will touch, declared before it runs so the policy judges it first. */
export interface PathClaim {
  /** The path exactly as the model gave it (resolved later by the policy seam). */
  path: string;
  access: Access;
}

/** A request a sandboxed command makes through Pencil's proxy. */
export interface NetRequest {
  /** The HTTP method of a request, plain or inside an HTTPS tunnel (the proxy opens tunnels and judges each request inside). */
  method: string;
  host: string;
  port: number;
  /** The full URL: http:// for a plain request, https:// for one inside a tunnel. */
  url?: string;
  /** The command line that made it. */
  command?: string;
}
