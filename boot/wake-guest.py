#!/usr/bin/env python3
"""Usage: boot/wake-guest.py SOCKET LOG TRACE [--help]

Wakes a guest that suspended itself to RAM, from the host: polls the VM
status on QEMU's HMP monitor at SOCKET (boot/run-qemu.sh starts QEMU with
-monitor unix:SOCKET,server=on,wait=off, and this script next to it) and,
each time the status is "paused (suspended)", waits SUSPENDED_S and sends
system_wakeup. Each wake-up appends a line to LOG:
    woken N trace-bytes B
where B is the size of QEMU's trace log TRACE at that moment: the host
checks (boot/check-host.sh) count the flushes traced after it. Ends when
QEMU closes the monitor, or after WAIT_S if the socket never appears.
"""
import os
import socket
import sys
import time

POLL_S = 0.2
SUSPENDED_S = 1.0
WAIT_S = 30.0
PROMPT = b"(qemu) "


def connect(path):
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                sys.exit(f"wake-guest: no monitor at {path} after {WAIT_S:.0f} s")
            time.sleep(POLL_S)


def until_prompt(sock):
    """What the monitor says up to its next prompt; None once QEMU is gone."""
    got = b""
    while not got.endswith(PROMPT):
        try:
            chunk = sock.recv(4096)
        except OSError:
            return None
        if not chunk:
            return None
        got += chunk
    return got.decode(errors="replace")


def command(sock, line):
    try:
        sock.sendall(line.encode() + b"\n")
    except OSError:
        return None
    return until_prompt(sock)


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 4:
        sys.exit("usage: boot/wake-guest.py SOCKET LOG TRACE (see --help)")
    path, log, trace = argv[1:]
    sock = connect(path)
    if until_prompt(sock) is None:
        return 0
    woken = 0
    while True:
        status = command(sock, "info status")
        if status is None:
            return 0
        if "paused (suspended)" in status:
            time.sleep(SUSPENDED_S)
            size = os.path.getsize(trace) if os.path.exists(trace) else 0
            if command(sock, "system_wakeup") is None:
                return 0
            woken += 1
            with open(log, "a", encoding="ascii") as f:
                f.write(f"woken {woken} trace-bytes {size}\n")
        time.sleep(POLL_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
