import type { CommandSpec, Shell } from "./completion-spec.ts";

/*
 * The completion scripts, as text. Each one completes, for `pencil`: the command in
 * first place, then that command's options, its fixed words, files after an option that
 * takes a path, and changeset ids, which it asks of the same pencil at completion time
 * (`pencil __complete ids`), so they are always the workspace's current ones.
 */

/** A word list quoted for a shell's single quotes (the words hold none themselves). */
const list = (words: readonly string[]) => words.join(" ");

/** The completion script for `shell`. */
export function completionScript(shell: Shell, specs: CommandSpec[]): string {
  if (shell === "bash") return bashScript(specs);
  if (shell === "zsh") return zshScript(specs);
  return fishScript(specs);
}

function bashScript(specs: CommandSpec[]): string {
  const cases = specs
    .map(
      (s) =>
        `    ${s.name}) flags='${list(s.flags)}'; values='${list(s.valueFlags)}'; words='${list(s.words)}'; ids=${s.ids ? 1 : 0} ;;`,
    )
    .join("\n");
  return `# pencil completion for bash: source it, or save it as
# ~/.local/share/bash-completion/completions/pencil
_pencil() {
  local cur prev cmd flags values words ids i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W '${list(specs.map((s) => s.name))} -h --help -V --version' -- "$cur") )
    return 0
  fi
  cmd="\${COMP_WORDS[1]}"
  flags=''; values=''; words=''; ids=0
  case "$cmd" in
${cases}
  esac
  case " $values " in
    *" $prev "*) COMPREPLY=( $(compgen -f -- "$cur") ); return 0 ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
    return 0
  fi
  # Only the first word after the command is a fixed word or an id.
  local args=0
  for ((i = 2; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) case " $values " in *" \${COMP_WORDS[i-1]} "*) ;; *) args=$((args + 1)) ;; esac ;;
    esac
  done
  [ "$args" -eq 0 ] || return 0
  if [ -n "$words" ]; then
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
  elif [ "$ids" = 1 ]; then
    COMPREPLY=( $(compgen -W "$("\${COMP_WORDS[0]}" __complete ids 2>/dev/null)" -- "$cur") )
  fi
  return 0
}
complete -F _pencil pencil
`;
}

function zshScript(specs: CommandSpec[]): string {
  const cases = specs
    .map(
      (s) =>
        `    ${s.name}) flags=(${list(s.flags)}); values=(${list(s.valueFlags)}); fixed=(${list(s.words)}); ids=${s.ids ? 1 : 0} ;;`,
    )
    .join("\n");
  return `#compdef pencil
# pencil completion for zsh: save it as _pencil in a directory of $fpath, or source it.
_pencil() {
  local cmd ids=0
  local -a flags values fixed
  if (( CURRENT == 2 )); then
    compadd -- ${list(specs.map((s) => s.name))} -h --help -V --version
    return
  fi
  cmd=\${words[2]}
  case $cmd in
${cases}
  esac
  if (( \${values[(Ie)\${words[CURRENT-1]}]} )); then
    _files
    return
  fi
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- $flags
    return
  fi
  (( CURRENT == 3 )) || return
  if (( \${#fixed} )); then
    compadd -- $fixed
  elif (( ids )); then
    compadd -- \${(f)"$(\${words[1]} __complete ids 2>/dev/null)"}
  fi
}
if (( $+functions[compdef] )); then compdef _pencil pencil; fi
`;
}

function fishScript(specs: CommandSpec[]): string {
  const names = list(specs.map((s) => s.name));
  const lines = [
    "# pencil completion for fish: save it as ~/.config/fish/completions/pencil.fish",
    "complete -c pencil -f",
    `complete -c pencil -n __fish_use_subcommand -a '${names}'`,
  ];
  for (const s of specs) {
    const when = `__fish_seen_subcommand_from ${s.name}`;
    for (const flag of s.flags) {
      const takesValue = s.valueFlags.includes(flag) ? " -r -F" : "";
      lines.push(
        flag.startsWith("--")
          ? `complete -c pencil -n '${when}' -l ${flag.slice(2)}${takesValue}`
          : `complete -c pencil -n '${when}' -s ${flag.slice(1)}${takesValue}`,
      );
    }
    if (s.words.length) lines.push(`complete -c pencil -n '${when}' -a '${list(s.words)}'`);
    if (s.ids) lines.push(`complete -c pencil -n '${when}' -a '(pencil __complete ids 2>/dev/null)'`);
  }
  return `${lines.join("\n")}\n`;
}
