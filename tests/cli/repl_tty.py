#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The REPL in a terminal (a pseudo-terminal, as a user's): tab completion of a name defined in
# the session and of a file name inside a string, every value of a line printed, $1 $2 $3,
# :help, an error that leaves the session alive, Ctrl-C at the prompt, Ctrl-D to leave.
# Usage: repl_tty.py TLISP. Prints one "ok" line per check; exits 1 at the first failure.
import os
import pty
import select
import sys
import tempfile
import termios
import time

tlisp = sys.argv[1]
home = tempfile.mkdtemp()  # a history file of its own
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"] = home
    os.environ["TERM"] = "xterm"
    os.execv(tlisp, [tlisp])

seen = ""


def read_until(text, timeout=20.0):
    """Reads the terminal until TEXT has appeared since the last call; returns what came."""
    global seen
    deadline = time.time() + timeout
    while text not in seen:
        left = deadline - time.time()
        if left <= 0:
            fail("waited for %r" % text)
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen += os.read(fd, 4096).decode("utf-8", "replace")
            except OSError:
                break
    got, seen = seen, seen[seen.index(text) + len(text):]
    return got


def send(keys):
    """Types KEYS once the line editor reads keys one by one (the terminal out of line mode:
    keys typed before that are the kernel's line discipline's, as typeahead)."""
    deadline = time.time() + 20.0
    while termios.tcgetattr(fd)[3] & termios.ICANON:
        if time.time() > deadline:
            fail("the terminal never left line mode")
        time.sleep(0.01)
    os.write(fd, keys.encode())


def fail(why):
    print("FAILED: %s; the terminal showed:\n%s" % (why, seen[-2000:]), flush=True)
    os.kill(pid, 9)
    sys.exit(1)


def check(name, keys, expect):
    send(keys)
    read_until(expect)
    print("%s: ok" % name, flush=True)


read_until("tl> ")
check("banner and prompt", "", "")
check("a definition", "(defun zebra-unique-fn (x) (* x 10))\r", "zebra-unique-fn")
read_until("tl> ")
check("tab completes a name defined in the session", "(zebra-uni\t 4)\r", "40")
read_until("tl> ")
with open(os.path.join(home, "completion-target.txt"), "w") as f:
    f.write("hello from a file\n")
check("tab completes a file name inside a string",
      '(read-file "%s/completion-tar\t")\r' % home, "hello from a file")
read_until("tl> ")
check("every value of a line", "(+ 1 2) (+ 3 4)\r", "3\r\n7\r\n")
read_until("tl> ")
check("$1 $2 $3", "(list $1 $2 $3)\r", "(7 3 ")
read_until("tl> ")
check(":help", ":help\r", ":describe NAME")
read_until("tl> ")
check("an error keeps the session", "(car 5)\r", "must be a list")
read_until("tl> ")
check("the session goes on", "(* 6 7)\r", "42")
read_until("tl> ")
send("(+ 1")
time.sleep(0.2)
send("\x03")  # Ctrl-C at the prompt drops the line
read_until("tl> ")
check("Ctrl-C at the prompt drops the line", "(+ 2 2)\r", "4")
read_until("tl> ")
send("\x04")  # Ctrl-D
deadline = time.time() + 20.0
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.time() > deadline:
        fail("Ctrl-D did not end the REPL")
    try:
        if select.select([fd], [], [], 0.05)[0]:
            seen += os.read(fd, 4096).decode("utf-8", "replace")
    except OSError:
        time.sleep(0.05)
if os.WEXITSTATUS(status) != 0:
    print("FAILED: Ctrl-D exited with %d" % os.WEXITSTATUS(status))
    sys.exit(1)
print("Ctrl-D leaves: ok")
