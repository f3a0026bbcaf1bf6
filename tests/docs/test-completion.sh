#!/bin/bash
# The bash completion (shell-completion/hvtuned.bash), sourced alone and asked as bash asks it
# on a TAB: what it offers after "hvtuned --st", a file after -c and --config=, and every long
# option of daemon/main.c's table; and that zsh parses the zsh one (77 without zsh).
# usage: test-completion.sh BASH_COMPLETION ZSH_COMPLETION MAIN_C
set -u
bash_file=$(realpath "$1") zsh_file=$(realpath "$2") main_c=$(realpath "$3")
failed=0
fail() { echo "FAIL: $*"; failed=1; }
# shellcheck source=shell-completion/hvtuned.bash
. "$bash_file"
[ "$(complete -p hvtuned)" = "complete -F _hvtuned hvtuned" ] || fail "hvtuned has no completion: $(complete -p hvtuned 2>&1)"

# offers WORD...: COMPREPLY for a line of these words, the cursor at the end of the last one
# (bash splits --config=FILE into --config, = and FILE), sorted, one a line.
offers() {
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _hvtuned hvtuned "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}" | sort
}
# expect WHAT GOT WANT
expect() {
        if [ "$2" = "$3" ]; then echo "ok: $1: $(echo "$2" | tr '\n' ' ')"; else fail "$1: got '$2', want '$3'"; fi
}

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/conf.d"
touch "$dir/hvtuned.conf" "$dir/other.conf"
cd "$dir" || exit 1

expect "hvtuned --st" "$(offers hvtuned --st)" "--status"
expect "hvtuned --check-" "$(offers hvtuned --check-)" "--check-config"
expect "hvtuned --con" "$(offers hvtuned --con)" "--config="
expect "hvtuned --re" "$(offers hvtuned --re)" "$(printf -- '--reload=\n--restore')"
expect "hvtuned -" "$(offers hvtuned - | grep -c .)" 15
expect "hvtuned -c hv" "$(offers hvtuned -c hv)" "hvtuned.conf"
expect "hvtuned -c DIR/o" "$(offers hvtuned -c "$dir/o")" "$dir/other.conf"
expect "hvtuned --config=" "$(offers hvtuned --config =)" "$(printf 'conf.d\nhvtuned.conf\nother.conf')"
expect "hvtuned --config=h" "$(offers hvtuned --config = h)" "hvtuned.conf"
expect "hvtuned --once -c hv" "$(offers hvtuned --once -c hv)" "hvtuned.conf"
expect "hvtuned -c FILE --dr" "$(offers hvtuned -c hvtuned.conf --dr)" "--dry-run"

# Every long option hvtuned takes is offered; one offered that main.c lacks is named (the
# status and restore commands come in from other branches).
all=$(offers hvtuned --)
names=$(sed -n 's/^ *{ "\([a-z-]*\)", *\(no\|required\)_argument.*/\1 \2/p' "$main_c")
[ -n "$names" ] || fail "no option table in $main_c"
while read -r name arg; do
        want=--$name
        [ "$arg" = required ] && want=--$name=
        echo "$all" | grep -qx -- "$want" || fail "daemon/main.c's $want is not offered"
done <<< "$names"
for w in $all; do
        n=${w#--}
        echo "$names" | grep -q "^${n%=} " || fail "$w is offered, and hvtuned does not take it ($main_c)"
done

[ $failed = 0 ] || exit 1
# The packages install the zsh file too: a machine without zsh cannot say it parses.
command -v zsh > /dev/null || { echo "SKIP: no zsh here (tools/install-deps installs it): $zsh_file is not parsed"; exit 77; }
zsh -n "$zsh_file" || { echo "FAIL: zsh -n $zsh_file"; exit 1; }
echo "ok: zsh parses $zsh_file"
echo PASS
