/** The exit status of a namespace setup that failed before the command started. */
export const SETUP_FAILED_EXIT = 97;

/** How the setup's complaint starts on stderr: the runner reads the reason after it. */
export const SETUP_MARKER = "pencil-sandbox:";

/** setpriv's options: every capability dropped (the bounding set too) and no_new_privs, so nothing the command runs can mount, unmount or regain privileges. */
export const DROP_PRIVILEGES: readonly string[] = ["--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"];

/** The single executable's first argument that makes it the namespace setup instead of the CLI (it has no setup file to run). */
export const SETUP_MODE = "__pencil-sandbox-setup";
