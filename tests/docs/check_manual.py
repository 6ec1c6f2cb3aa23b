#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks the generated reference manual (tlisp doc DIR, stdlib/manual.lisp; issue 26):
#  1. every page parses and every link within the manual resolves to a page and an anchor;
#  2. the pages load in headless Chromium (Debian's chromium), and the search box of index.html
#     finds softmax (index.html?q=softmax fills it in);
#  3. a page has the entries it should, with their examples' results;
#  4. with CWD, the folder tlisp doc ran in: the examples left no file there.
# Usage: check_manual.py DIR [CWD]
import html.parser
import os
import subprocess
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag in ("link", "script") and ("href" in a or "src" in a):
            self.links.append(a.get("href") or a.get("src"))


def fail(message):
    print("check_manual: " + message)
    sys.exit(1)


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: check_manual.py DIR [CWD]")
    root = sys.argv[1]
    if len(sys.argv) == 3:
        left = sorted(os.listdir(sys.argv[2]))
        if left:
            fail("the manual's examples left files in the folder they ran in: %s" % left)
        print("examples left no files behind")
    pages = {}
    for name in sorted(os.listdir(root)):
        if name.endswith(".html"):
            p = Page()
            with open(os.path.join(root, name), encoding="utf-8") as f:
                p.feed(f.read())
            pages[name] = p
    if "index.html" not in pages or len(pages) < 8:
        fail("expected index.html and a page per module in %s, found %s" % (root, sorted(pages)))
    links = 0
    for name, p in pages.items():
        for href in p.links:
            url = urllib.parse.urlparse(href)
            if url.scheme or href.startswith("//"):
                continue
            target = url.path or name
            if not os.path.exists(os.path.join(root, target)):
                fail("%s links to %s: no such file" % (name, href))
            if url.fragment and target.endswith(".html") and url.fragment not in pages[target].ids:
                fail("%s links to %s: no anchor %s there" % (name, href, url.fragment))
            links += 1
    print("links: %d, all resolve" % links)

    chromium = next((c for c in ("chromium", "chromium-browser") if subprocess.run(
        ["sh", "-c", "command -v " + c], capture_output=True).returncode == 0), None)
    if chromium is None:
        fail("headless Chromium is not installed (Debian: apt install chromium; scripts/bootstrap.sh does)")

    def dom(page):
        url = "file://" + os.path.abspath(os.path.join(root, page))
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                            "--dump-dom", url], capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or "<body" not in r.stdout:
            fail("chromium could not load %s (exit %d): %s" % (page, r.returncode, r.stderr[-500:]))
        return r.stdout

    index = dom("index.html?q=softmax")
    results = index[index.find('<ul id="results">'):]
    results = results[:results.find("</ul>")]
    if '<a href="tensors.html#softmax">softmax</a>' not in results:
        fail("searching for softmax in index.html found no link to it: %s" % results[:300])
    print("search: softmax found (%d results)" % results.count("<li>"))
    tensors = dom("tensors.html")
    for needle in ('id="softmax"', 'id="matmul"', 'class="result"'):
        if needle not in tensors:
            fail("tensors.html as Chromium loads it lacks %s" % needle)
    # The guides made from docs/*.md: the embedding API and tlisp compile.
    for page, needle in (("embedding.html", "tl_error_message"), ("aot.html", "tlisp compile")):
        text = dom(page)
        if needle not in text or "<pre>" not in text:
            fail("%s as Chromium loads it lacks %s or a code block (is docs/ beside stdlib/?)" % (page, needle))
    print("pages load in chromium")


main()
