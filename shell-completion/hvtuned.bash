# bash completion for hvtuned(8): its options, a file after -c/--config, the process id of a
# running hvtuned after --reload. Installed as .../bash-completion/completions/hvtuned, which
# bash-completion loads the first time hvtuned is completed. Self-contained (no helper of
# bash-completion's), so that tests/docs/test-completion.sh can source it alone.
_hvtuned() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=
        local opts='--config= --check-config --once --dry-run --reload= --status --verify --json --restore
                    --verbose --help --version -c -v -h'

        ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
        # "--config=FILE": bash splits the word at '=' (COMP_WORDBREAKS), into "--config", "="
        # and what follows.
        if [[ $cur == = ]]; then
                cur=
        elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
                prev=${COMP_WORDS[COMP_CWORD - 2]}
        fi

        case $prev in
        -c | --config)
                compopt -o filenames 2> /dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return
                ;;
        --reload)
                mapfile -t COMPREPLY < <(compgen -W "$(pidof hvtuned 2> /dev/null)" -- "$cur")
                return
                ;;
        esac

        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
        # An option that takes its value after '=': no space after it.
        [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2> /dev/null
        return 0
}
complete -F _hvtuned hvtuned
