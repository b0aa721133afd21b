// What run_command's answer says of the network when it is off for commands: what was refused, what could not be
// resolved, and the setting that opens it.

/** Output that says a command needed the network (resolver, connect and package-manager errors). */
export const NETWORK_FAILURE =
  /Could not resolve host|Temporary failure in name resolution|Network is unreachable|ENOTFOUND|EAI_AGAIN|ENETUNREACH|getaddrinfo|Name or service not known/i;

/** Host names a program's own words say it could not resolve (curl, git, Node, npm, pip, Python, Go). */
const UNRESOLVED_HOST =
  /(?:Could not resolve host:?|ENOTFOUND|EAI_AGAIN|getaddrinfo \w+|Failed to resolve '|Name or service not known[^\n]*?host[=: ]+|lookup) ['"]?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)/gi;

/**
 * What the answer says of the network when it is off: every request the refusing proxy turned away (host, port,
 * URL when known), the hosts the output says could not be resolved (a client that ignores the proxy variables
 * asks the resolver, which has no network to ask), and the setting that opens them.
 */
export function networkOffReport(
  refused: readonly { method: string; host: string; port: number; url?: string }[],
  output: string,
): string {
  const names = new Set<string>();
  for (const m of output.matchAll(UNRESOLVED_HOST)) names.add(m[1]!.toLowerCase().replace(/\.$/, ""));
  for (const r of refused) names.delete(r.host);
  if (refused.length === 0 && names.size === 0) return NETWORK_FAILURE.test(output) ? `\n${NETWORK_OFF_ADVICE}` : "";
  const lines = ["Network: off for commands, and the command tried to reach it:"];
  const times = new Map<string, number>();
  for (const r of refused) {
    const what = `${r.method} ${r.url ?? `${r.host}:${r.port}`}`;
    times.set(what, (times.get(what) ?? 0) + 1);
  }
  for (const [what, n] of [...times].slice(0, 20))
    lines.push(`  REFUSED at once: ${what}${n > 1 ? ` (${n} times)` : ""}`);
  if (times.size > 20) lines.push(`  …and ${times.size - 20} more`);
  for (const name of [...names].slice(0, 20)) lines.push(`  could not resolve: ${name} (no network to ask)`);
  lines.push(NETWORK_OFF_ADVICE);
  return `\n${lines.join("\n")}`;
}

const NETWORK_OFF_ADVICE =
  'The network is off for commands: the owner can turn it on with "sandbox": {"network": true} in their settings, after which each host is asked (or allowed by Net(host) rules). Do not retry; tell the user which hosts the command needs, or ask them to run the download or install.';
