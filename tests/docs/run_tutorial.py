#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Runs docs/tutorial.md (issue 26: a tutorial whose every snippet is tested). Each ```lisp block
# runs in one tlisp session, in order, as if typed at the REPL: the value of each form is
# printed after what the form prints itself. The ```output block that follows a lisp block
# (when there is one) must match what it printed, line by line; "…" in an expected line
# matches any text (timings, accuracies that depend on the machine's thread count).
# Usage: run_tutorial.py TLISP [TUTORIAL.md] [--show]   (--show prints what each block printed)
import os
import re
import subprocess
import sys
import tempfile

MARK = "\x01block "


def blocks(text):
    """The tutorial's (lisp source, expected output or None, line) in order."""
    out = []
    for m in re.finditer(r"```(lisp|output)\n(.*?)```", text, re.S):
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == "lisp":
            out.append([m.group(2), None, line])
        elif out and out[-1][1] is None:
            out[-1][1] = m.group(2)
    return out


def lisp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


DRIVER = r"""
(defun %tutorial-run (text)
  (let ((at 0))
    (loop
      (when (= 0 (length (string-trim '(#\Space #\Newline #\Tab) (subseq text at)))) (return))
      (multiple-value-bind (form used) (read-from-string (subseq text at))
        (setq at (+ at used))
        (prin1 (eval form))
        (terpri)))))
"""


def without_comments(src):
    """SRC without ; comments (outside strings), as the REPL would read it."""
    out = []
    for line in src.split("\n"):
        in_string = False
        cut = len(line)
        i = 0
        while i < len(line):
            c = line[i]
            if c == "\\" and in_string:
                i += 2
                continue
            if c == '"':
                in_string = not in_string
            elif c == ";" and not in_string:
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def main():
    args = [a for a in sys.argv[1:] if a != "--show"]
    show = "--show" in sys.argv
    tlisp = args[0]
    path = args[1] if len(args) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "docs", "tutorial.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    bs = blocks(text)
    if len(bs) < 10:
        print("run_tutorial: only %d lisp blocks in %s" % (len(bs), path))
        return 1
    script = DRIVER
    for i, (src, _, _) in enumerate(bs):
        script += '(format t "~a~a~%%" (code-char 1) "block %d")\n(%%tutorial-run %s)\n' % (i, lisp_string(without_comments(src)))
    with tempfile.TemporaryDirectory() as work:
        driver = os.path.join(work, "tutorial-driver.lisp")
        with open(driver, "w", encoding="utf-8") as f:
            f.write(script)
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), ".."))
        # Bytes, not text: text mode would turn a progress bar's carriage returns into newlines.
        r = subprocess.run([tlisp, driver], capture_output=True, cwd=root, timeout=600)
    stdout = r.stdout.decode("utf-8", "replace")
    stderr = r.stderr.decode("utf-8", "replace")
    parts = stdout.split(MARK)[1:]
    failures = 0
    for i, (src, expected, line) in enumerate(bs):
        got = parts[i].split("\n", 1)[1] if i < len(parts) else "(the session ended before this block)\n" + stderr
        # What a terminal shows: a line rewritten after a carriage return (a progress bar)
        # shows its last version.
        got = "\n".join(l.split("\r")[-1].rstrip() for l in got.split("\n")).strip("\n")
        if show:
            print("--- block %d (line %d)\n%s" % (i, line, got))
        if expected is None:
            continue
        want = expected.strip("\n").split("\n")
        have = got.split("\n")
        ok = len(want) == len(have) and all(
            re.fullmatch(".*".join(re.escape(p) for p in w.rstrip().split("…")), h) for w, h in zip(want, have))
        if not ok:
            failures += 1
            print("docs/tutorial.md:%d: the block printed\n%s\nbut the tutorial shows\n%s\n" % (line, got, expected.strip("\n")))
    if r.returncode != 0 and len(parts) < len(bs):
        print("tlisp failed (exit %d): %s" % (r.returncode, stderr[-2000:]))
        return 1
    print("tutorial: %d blocks run, %d with output checked, %d differ" %
          (len(bs), sum(1 for b in bs if b[1] is not None), failures))
    return 1 if failures else 0


sys.exit(main())
