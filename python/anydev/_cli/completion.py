"""Shell completion scripts for ``anydev`` (``anydev completion bash|zsh|fish``),
generated from the command line's own parsers, so that they list exactly the
commands, options and choices the parsers accept."""

from __future__ import annotations

import argparse


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each command."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append((name, helps.get(name, ""), sub))
    return out


def _options(parser: argparse.ArgumentParser) -> list[tuple[list[str], str, list[str], bool]]:
    """(option strings, help, choices, takes a value) of each option."""
    out = []
    for a in parser._actions:
        if a.option_strings:
            choices = [str(c) for c in a.choices] if a.choices else []
            out.append((list(a.option_strings), (a.help or "").replace("%%", "%"), choices,
                        a.nargs != 0))
    return out


def _positional_choices(parser: argparse.ArgumentParser) -> list[str]:
    for a in parser._actions:
        if not a.option_strings and a.choices and \
                not isinstance(a, argparse._SubParsersAction):
            return [str(c) for c in a.choices]
    return []


def _first_line(text: str) -> str:
    text = " ".join(text.split())
    return text[:80].replace("'", "")


def bash(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    cases = []
    for name, _help, sub in cmds:
        words = [o for opts, _, _, _ in _options(sub) for o in opts]
        words += _positional_choices(sub)
        words += [n for n, _, _ in _commands(sub)]
        values = []
        for opts, _, choices, _takes in _options(sub):
            if choices:
                values.append(f"        {'|'.join(opts)}) COMPREPLY=($(compgen -W "
                              f"'{' '.join(choices)}' -- \"$cur\")); return;;")
        value_cases = "\n".join(values)
        cases.append(f"""    {name})
      case "$prev" in
{value_cases}
      esac
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '{' '.join(words)}' -- "$cur"))
      else
        COMPREPLY=($(compgen -W '{' '.join(_positional_choices(sub) +
                                            [n for n, _, _ in _commands(sub)])}' -- "$cur")
                   $(compgen -f -- "$cur"))
      fi;;""")
    names = " ".join(n for n, _, _ in cmds)
    body = "\n".join(cases)
    return f"""# bash completion for anydev (anydev completion bash)
_anydev() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W '{names} --help --version -V' -- "$cur"))
    return
  fi
  case "${{COMP_WORDS[1]}}" in
{body}
  esac
}}
complete -o filenames -o bashdefault -F _anydev anydev
"""


def zsh(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    described = "\n".join(f"    '{n}:{_first_line(h)}'" for n, h, _ in cmds)
    cases = []
    for name, _help, sub in cmds:
        specs = []
        for opts, h, choices, takes in _options(sub):
            what = f":value:({' '.join(choices)})" if choices else (":value:_files" if takes
                                                                     else "")
            h = _first_line(h).replace("[", "(").replace("]", ")").replace(":", " ")
            for o in opts:
                specs.append(f"'{o}[{h}]{what}'")
        pos = _positional_choices(sub) + [n for n, _, _ in _commands(sub)]
        specs.append(f"'*:argument:({' '.join(pos)})'" if pos else "'*:file:_files'")
        cases.append(f"    {name}) _arguments -s {' '.join(specs)};;")
    body = "\n".join(cases)
    return f"""#compdef anydev
# zsh completion for anydev (anydev completion zsh > "${{fpath[1]}}/_anydev")
_anydev() {{
  local -a commands
  commands=(
{described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd=${{words[2]}}
  shift words
  (( CURRENT-- ))
  case $cmd in
{body}
  esac
}}
if [ "$funcstack[1]" = "_anydev" ]; then
  _anydev "$@"
else
  compdef _anydev anydev
fi
"""


def fish(parser: argparse.ArgumentParser) -> str:
    lines = ["# fish completion for anydev (anydev completion fish > "
             "~/.config/fish/completions/anydev.fish)",
             "complete -c anydev -f",
             "complete -c anydev -n __fish_use_subcommand -s V -l version -d 'print the version'"]
    cmds = _commands(parser)
    for name, h, _ in cmds:
        lines.append(f"complete -c anydev -n __fish_use_subcommand -a {name} "
                     f"-d '{_first_line(h)}'")
    for name, _h, sub in cmds:
        cond = f"'__fish_seen_subcommand_from {name}'"
        for opts, h, choices, takes in _options(sub):
            flags = []
            for o in opts:
                if o.startswith("--"):
                    flags.append(f"-l {o[2:]}")
                elif len(o) == 2:
                    flags.append(f"-s {o[1:]}")
                else:
                    flags.append(f"-o {o[1:]}")
            extra = (f" -x -a '{' '.join(choices)}'" if choices else (" -r -F" if takes else ""))
            lines.append(f"complete -c anydev -n {cond} {' '.join(flags)}{extra} "
                         f"-d '{_first_line(h)}'")
        pos = _positional_choices(sub) + [n for n, _, _ in _commands(sub)]
        if pos:
            lines.append(f"complete -c anydev -n {cond} -a '{' '.join(pos)}'")
        else:
            lines.append(f"complete -c anydev -n {cond} -F")
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](parser)
