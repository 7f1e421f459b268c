"""`ikigai completion bash|zsh|fish`: completion scripts built from the parser itself, so
they name every subcommand and option there is (argparse alone; no new dependency)."""

from __future__ import annotations

import argparse


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]  # noqa: SLF001


def _choices(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Options whose values are a fixed list (--output-format, --format)."""
    return {o: list(a.choices) for a in parser._actions  # noqa: SLF001
            for o in a.option_strings if a.choices and o.startswith("--")}


_FILES = ("--db", "--config", "--script", "--output", "-o", "--recover")


def bash(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    cases = []
    for name, sub in commands.items():
        opts = " ".join(_options(sub))
        if name == "completion":
            opts = "bash zsh fish"
        cases.append(f'        {name}) words="{opts}" ;;')
    values = []
    for option, choices in {**_choices(parser), **{o: c for s in commands.values()
                                                   for o, c in _choices(s).items()}}.items():
        values.append(f'        {option}) COMPREPLY=($(compgen -W "{" ".join(choices)}" -- "$cur")); return ;;')
    return f"""# bash completion for ikigai: source <(ikigai completion bash)
_ikigai() {{
    local cur prev cmd word words
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "$prev" in
        {"|".join(_FILES)}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
{chr(10).join(values)}
    esac
    cmd=""
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        case "$word" in
            {"|".join(commands)}) cmd="$word"; break ;;
        esac
    done
    case "$cmd" in
        "") words="{" ".join(commands)} {" ".join(_options(parser))}" ;;
{chr(10).join(cases)}
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _ikigai ikigai
"""


def _zsh_quote(text: str) -> str:
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    described = " ".join(f"'{name}:{_zsh_quote((sub.description or name).rstrip('.'))}'"
                         for name, sub in commands.items())
    cases = []
    for name, sub in commands.items():
        words = "bash zsh fish" if name == "completion" else " ".join(_options(sub))
        cases.append(f"        {name}) compadd -- {words} ;;")
    values = []
    for option, choices in {**_choices(parser), **{o: c for s in commands.values()
                                                   for o, c in _choices(s).items()}}.items():
        values.append(f"        {option}) compadd -- {' '.join(choices)}; return ;;")
    return f"""#compdef ikigai
# zsh completion for ikigai: ikigai completion zsh > ~/.zfunc/_ikigai (~/.zfunc in $fpath),
# or source <(ikigai completion zsh) after compinit
_ikigai() {{
    local -a commands
    commands=({described})
    case "$words[CURRENT-1]" in
        {"|".join(_FILES)}) _files; return ;;
{chr(10).join(values)}
    esac
    if (( CURRENT == 2 )); then
        _describe -t commands 'ikigai command' commands
        compadd -- {" ".join(_options(parser))}
        return
    fi
    case "$words[2]" in
{chr(10).join(cases)}
        *) _files ;;
    esac
}}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _ikigai "$@"
else
    compdef _ikigai ikigai
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    names = " ".join(commands)
    lines = ["# fish completion for ikigai: ikigai completion fish > ~/.config/fish/completions/ikigai.fish",
             "complete -c ikigai -f"]
    for name, sub in commands.items():
        lines.append(f"complete -c ikigai -n 'not __fish_seen_subcommand_from {names}' -a {name} "
                     f"-d {_fish_quote((sub.description or name).rstrip('.'))}")
    for action in parser._actions:  # noqa: SLF001
        for option in action.option_strings:
            if option.startswith("--") and option not in ("--help", "--version"):
                lines.append(f"complete -c ikigai -n 'not __fish_seen_subcommand_from {names}' "
                             f"-l {option[2:]}" + (" -r -F" if option in _FILES else ""))
    for name, sub in commands.items():
        if name == "completion":
            lines.append("complete -c ikigai -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'")
            continue
        for action in sub._actions:  # noqa: SLF001
            for option in action.option_strings:
                if not option.startswith("--") or option == "--help":
                    continue
                extra = " -r -F" if option in _FILES else ""
                if action.choices:
                    extra = f" -x -a {_fish_quote(' '.join(action.choices))}"
                lines.append(f"complete -c ikigai -n '__fish_seen_subcommand_from {name}' "
                             f"-l {option[2:]}{extra}")
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](parser)
