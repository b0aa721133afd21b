import type { Scratch } from "../scratch/types.ts";

/** True for environment variable names that may hold credentials: never passed to commands. */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === "PWD" || upper === "OLDPWD") return false;
  if (upper.startsWith("TELEGRAM_") || upper.startsWith("INSFORGE_") || upper.endsWith("_API_KEY")) return true;
  return /KEY|TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE/.test(upper);
}

/**
 * True for environment variable names that lead to a host service's socket
 * or session (ssh-agent, D-Bus, docker, X11, Wayland, tmux, screen, Kerberos):
 * never passed to commands, which could drive those services outside any sandbox.
 */
export function namesHostSocket(name: string): boolean {
  const upper = name.toUpperCase();
  if (/(^|_)(SOCK|SOCKET)$/.test(upper) || /^(SSH|GPG|DBUS|DOCKER|PODMAN|TMUX|WAYLAND|KRB5|PULSE)_/.test(upper))
    return true;
  return ["DISPLAY", "XAUTHORITY", "ICEAUTHORITY", "STY", "TMUX", "XDG_RUNTIME_DIR", "VSCODE_IPC_HOOK_CLI"].includes(
    upper,
  );
}

/** The command's environment: a minimal allow-list, HOME and TMPDIR inside the scratch, nothing that looks secret or leads to a host socket. */
export function commandEnv(
  parent: Record<string, string | undefined>,
  s: Pick<Scratch, "home" | "tmp">,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: commandPath(parent),
    HOME: s.home,
    TMPDIR: s.tmp,
    TMP: s.tmp,
    TEMP: s.tmp,
    LANG: parent.LANG || "C.UTF-8",
    TERM: "dumb",
    CI: "1",
    NO_COLOR: "1",
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
  };
  for (const name of ["LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ"]) {
    const value = parent[name];
    if (value) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra))
    if (!looksSecret(name) && !namesHostSocket(name)) env[name] = value;
  return env;
}

/** The command's PATH: the parent's, else a minimal system one. */
export function commandPath(parent: Record<string, string | undefined>): string {
  return parent.PATH || "/usr/local/bin:/usr/bin:/bin";
}
