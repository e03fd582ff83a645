#!/usr/bin/python3
"""mokmanager.py SOCKET ACTION [PASSWORD] - a person at the serial console of
a machine booting through Debian's shim (test/system/laptop.sh): connects to
the console QEMU serves on SOCKET (test/qemu/boot.sh --console) and answers
shim's screens as the administrator's guide says, one screen at a time:

  enroll PASSWORD  MokManager after `mokutil --import`: "Press any key to
                   perform MOK management", Enroll MOK, Continue, Yes, the
                   password, Reboot
  delete PASSWORD  the same after `mokutil --delete`: Delete MOK, ...
  refused          shim refusing its second stage: OK on each "Verification
                   failed" box, and at MokManager's prompt a key, then
                   "Continue boot"; done once something else boots (GRUB,
                   the kernel, the loader)

Each screen is recognised by its text in the console's output (shim's menus
are drawn with escape sequences; the words themselves come whole), and the
keys are sent as a VT100 terminal sends them (OVMF's terminal driver reads
ESC [ B as the down arrow).  It prints one "mokmanager: ..." line per screen
answered.  No time limit of its own: it waits for the next screen until the
console closes (QEMU exits: test/qemu/boot.sh's limits end a boot that
hangs).  Exit status 0 when ACTION was carried out to its end, 1 when the
console closed first or a screen said a step failed (the line says which;
the machine then waits at that screen: the caller stops it).
"""
import socket
import sys
import time

import pexpect
import pexpect.fdpexpect

DOWN = b"\x1b[B"
ENTER = b"\r"


def say(msg):
    print("mokmanager: " + msg, flush=True)


def connect(path):
    """The console socket, once QEMU listens on it."""
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            time.sleep(0.2)


class Console:
    def __init__(self, sock):
        self.sock = sock
        self.p = pexpect.fdpexpect.fdspawn(sock.fileno(), timeout=None)

    def wait(self, *texts):
        """Index of the first of TEXTS to appear next; None when the console
        closed first."""
        pats = [t.encode() for t in texts] + [pexpect.EOF]
        i = self.p.expect_exact(pats)
        return None if i == len(texts) else i

    def closed(self):
        """Wait for the console to close."""
        self.p.expect(pexpect.EOF)

    def pause(self, secs):
        """Let SECS pass, reading the console meanwhile: QEMU's serial port
        drops what it cannot write, and a socket whose reader stops is full
        after a few hundred bytes (each byte is a message of its own)."""
        self.p.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=secs)

    def keys(self, *seq):
        # the screen is drawn before the firmware reads keys; what arrives
        # early waits in the terminal's queue, one key at a time is read
        self.pause(0.5)
        for k in seq:
            self.sock.sendall(k)
            self.pause(0.3)


# what MokManager and shim say when a step failed (each waits for a key)
FAILURES = ("Password doesn't match", "Invalid password length", "Failed to enroll keys",
            "Failed to delete keys", "Failed to set variable", "Verification failed")


def manage(con, item, title, question, password):
    """MokManager's menus for an enrolment or a deletion."""
    steps = [
        ("Press any key to perform MOK management", [ENTER], "a key at the countdown"),
        # "Continue boot" first, then the one request shim found
        (item, [DOWN, ENTER], item),
        # the key list: "View key 0", then "Continue"
        (title, [DOWN, ENTER], "Continue (after " + title + ")"),
        # "No" first, then "Yes"
        (question, [DOWN, ENTER], "Yes (" + question + ")"),
        ("Password:", [password.encode() + ENTER], "the password"),
        # the first item becomes "Reboot" once something changed
        ("Reboot", [ENTER], "Reboot"),
    ]
    for text, seq, what in steps:
        i = con.wait(text, *FAILURES)
        if i is None:
            say("the console closed before '%s'" % text)
            return 1
        if i > 0:
            say("'%s' before '%s'" % (FAILURES[i - 1], text))
            return 1
        con.keys(*seq)
        say(what)
    # MokManager resets the machine: QEMU (run with -no-reboot) exits
    con.closed()
    say("the machine reset")
    return 0


def refused(con):
    """shim refused its second stage: get past its boxes and MokManager."""
    boxes = 0
    prompted = 0
    while True:
        # GRUB says "Welcome to GRUB!" on every console it starts with (its
        # menu goes to the screen only, and a quiet kernel prints nothing)
        i = con.wait("Verification failed", "Press any key to perform MOK management",
                     "Perform MOK management", "Welcome to GRUB!", "Linux version",
                     "kaslr-loader:")
        if i is None:
            say("the console closed (%d refusals, %d MokManager prompts)" % (boxes, prompted))
            return 1
        if i == 0:
            boxes += 1
            con.keys(ENTER)
            say("OK on 'Verification failed' (%d)" % boxes)
        elif i == 1:
            prompted += 1
            con.keys(ENTER)
            say("a key at MokManager's countdown")
        elif i == 2:
            # "Continue boot" is the first item
            con.keys(ENTER)
            say("Continue boot")
        else:
            say("then: %s (%d refusals, %d MokManager prompts)" % (
                ["", "", "", "GRUB", "a kernel", "kaslr-loader"][i], boxes, prompted))
            return 0


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("enroll", "delete", "refused") or \
            (sys.argv[2] != "refused" and len(sys.argv) != 4):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    con = Console(connect(sys.argv[1]))
    action = sys.argv[2]
    if action == "enroll":
        return manage(con, "Enroll MOK", "[Enroll MOK]", "Enroll the key(s)?", sys.argv[3])
    if action == "delete":
        return manage(con, "Delete MOK", "[Delete MOK]", "Delete the key(s)?", sys.argv[3])
    return refused(con)


if __name__ == "__main__":
    sys.exit(main())
