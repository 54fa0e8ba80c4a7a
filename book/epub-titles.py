#!/usr/bin/env python3
"""epub-titles.py BOOK.epub: give each chapter file of pandoc's EPUB the title
of its first heading (pandoc 2.17 titles them "ch004.xhtml"), in place.

The archive is rewritten as EPUB requires: "mimetype" first and stored."""
import html
import re
import sys
import zipfile

path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    entries = [(i, z.read(i.filename)) for i in z.infolist()]

def retitle(data):
    text = data.decode("utf-8")
    m = re.search(r"<h1[^>]*>(.*?)</h1>", text, re.S)
    if not m:
        return data
    title = re.sub(r"<[^>]+>", "", m.group(1))
    title = " ".join(html.unescape(title).split())
    text = re.sub(r"<title>[^<]*</title>",
                  "<title>" + html.escape(title, quote=False) + "</title>", text, count=1)
    return text.encode("utf-8")

with zipfile.ZipFile(path + ".tmp", "w") as z:
    for info, data in sorted(entries, key=lambda e: e[0].filename != "mimetype"):
        if re.search(r"text/ch\d+\.xhtml$", info.filename):
            data = retitle(data)
        method = zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED
        z.writestr(zipfile.ZipInfo(info.filename, info.date_time), data, compress_type=method)

import os
os.replace(path + ".tmp", path)
