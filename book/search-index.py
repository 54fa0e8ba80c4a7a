#!/usr/bin/env python3
"""search-index.py SITE PAGE.html... > search-index.js

The site's search index (book/js/book.js searches it with lunr): one entry
per section (h1, h2 or h3 with its text up to the next such heading) of each
built page, as `window.BOOK_SEARCH_DOCS = [...]`, a script so that it loads
from file:// too. lunr splits words on spaces, which Chinese has none of, so
each entry also carries its Chinese text as overlapping pairs of characters
(and each character alone), each spelled in ASCII digits as lunr keeps them:
就绪 -> cjk23601n32490. book.js spells a query's Chinese the same way."""
import html
import json
import re
import sys

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

def cjk_tokens(text):
    """Every character and every pair of neighbours, of each Chinese run."""
    out = set()
    for run in CJK.findall(text):
        for i, ch in enumerate(run):
            out.add("cjk%d" % ord(ch))
            if i + 1 < len(run):
                out.add("cjk%dn%d" % (ord(ch), ord(run[i + 1])))
    return " ".join(sorted(out))

def plain(fragment):
    fragment = re.sub(r"<(script|style)\b.*?</\1>", " ", fragment, flags=re.S)
    # A block's tags part words; an inline tag (a highlighted token) does not.
    fragment = re.sub(r"</?(p|li|div|pre|br|tr|td|th|h\d|ul|ol|dl|dt|dd|table|figure|figcaption|blockquote|section|details|summary)\b[^>]*>",
                      " ", fragment)
    fragment = re.sub(r"<[^>]+>", "", fragment)
    return " ".join(html.unescape(fragment).split())

site = sys.argv[1].rstrip("/") + "/"
docs = []
for path in sys.argv[2:]:
    page = path[len(site):] if path.startswith(site) else path
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<main[^>]*>(.*)</main>", text, re.S)
    body = m.group(1) if m else ""
    # Not the navigation, the page's contents, or the front page's list.
    body = re.sub(r"<nav\b.*?</nav>", " ", body, flags=re.S)
    body = re.sub(r"<details class=\"page-toc\".*?</details>", " ", body, flags=re.S)
    body = re.sub(r"<section class=\"front-contents\".*?</section>", " ", body, flags=re.S)
    parts = re.split(r"(<h[123][^>]*\bid=\"[^\"]*\"[^>]*>.*?</h[123]>)", body, flags=re.S)
    page_title = None
    heading, anchor = None, ""
    for part in parts:
        h = re.match(r"<h([123])[^>]*\bid=\"([^\"]*)\"[^>]*>(.*?)</h[123]>", part, re.S)
        if h:
            heading, anchor = plain(h.group(3)), h.group(2)
            if h.group(1) == "1" and page_title is None:
                page_title, anchor = heading, ""
            continue
        if heading is None:
            continue  # nothing stands before the page's title
        words = plain(part)
        docs.append({
            "u": page + ("#" + anchor if anchor else ""),
            "p": page_title or page,
            "h": heading,
            "t": words,
            "c": cjk_tokens((heading or "") + " " + words),
        })
        # A table row that holds Chinese (a glossary entry: 就绪队列 | ready
        # queue | ...) is an entry of its own too: short, so it ranks first
        # for its own term.
        for row in re.findall(r"<tr\b.*?</tr>", part, re.S):
            cells = [plain(c) for c in re.findall(r"<td\b[^>]*>(.*?)</td>", row, re.S)]
            if cells and CJK.search(cells[0]):
                text = " · ".join(c for c in cells if c)
                docs.append({
                    "u": page + ("#" + anchor if anchor else ""),
                    "p": page_title or page,
                    "h": heading + ": " + " · ".join(c for c in cells[:2] if c),
                    "t": text,
                    "c": cjk_tokens(text),
                })

sys.stdout.write("window.BOOK_SEARCH_DOCS = ")
json.dump(docs, sys.stdout, ensure_ascii=False, separators=(",", ":"))
sys.stdout.write(";\n")
