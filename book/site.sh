#!/bin/sh
# site.sh PAGE SOURCE...
#
# Prints the navigation metadata (YAML) of one page of the multi-page site:
# the lists of chapters, appendices and answers with their titles and links,
# the page's previous and next pages, and `root`, the way back to the site's
# top folder. SOURCE... is every page in reading order (book.mk sorts them:
# book/index.md, chapters/NN-*.md, chapters/aN-*.md, chapters/answers/*.md).
# A page's title is its first "# " heading; its link is its path under
# chapters/ with .html for .md (chapters/answers/01.md -> answers/01.html).
page=$1; shift

title() {  # the first level-1 heading, without a trailing {#id .class}
    t=$(sed -n 's/^# *//p' "$1" | head -n 1 | sed 's/ *{[^}]*} *$//')
    printf '%s' "${t:-$1}" | sed 's/\\/\\\\/g; s/"/\\"/g'
}
href() {
    case $1 in
        book/index.md) echo index.html ;;
        *) f=${1#chapters/}; echo "${f%.md}.html" ;;
    esac
}
group() {
    case $1 in
        chapters/answers/*) echo answers ;;
        chapters/[0-9]*) echo chapters ;;
        chapters/*) echo appendices ;;
        *) echo front ;;
    esac
}
entry() {  # PREFIX INDENT FILE
    printf '%stitle: "%s"\n%shref: "%s"\n' "$1" "$(title "$3")" "$2" "$(href "$3")"
}

case $page in chapters/answers/*) echo 'root: "../"' ;; *) echo 'root: ""' ;; esac
# A chapter's program as one file (book.mk makes code/NN-slug.tar.gz).
case $page in
    chapters/[0-9][0-9]-*.md)
        d=$(basename "$page" .md)
        [ -d "code/$d" ] && printf 'archive:\n  dir: "code/%s"\n  name: "%s.tar.gz"\n  href: "code/%s.tar.gz"\n' "$d" "$d" "$d" ;;
esac
[ "$page" = book/index.md ] && echo 'front: true'
echo "pagetitle: \"$(title "$page")\""
for g in chapters appendices answers; do
    first=1
    for f in "$@"; do
        [ "$(group "$f")" = "$g" ] || continue
        [ $first = 1 ] && echo "$g:" && first=0
        entry '  - ' '    ' "$f"
        [ "$f" = "$page" ] && echo '    current: true'
    done
done
prev=
for f in "$@"; do
    if [ "$f" = "$page" ]; then
        [ -n "$prev" ] && echo 'prev:' && entry '  ' '  ' "$prev"
        found=1
    elif [ -n "$found" ]; then
        echo 'next:' && entry '  ' '  ' "$f"
        break
    fi
    prev=$f
done
