#!/usr/bin/env python3
"""qmp.py SOCKET CMD [ARGS]: talk to a QEMU QMP socket (run-vm.sh --qmp).

  qmp.py SOCK get PATH PROPERTY         qom-get; prints the value
  qmp.py SOCK set PATH PROPERTY VALUE   qom-set (VALUE parsed as JSON if it can be)
  qmp.py SOCK wait [SECS]               wait until the socket answers

PATH is a QOM path, e.g. /machine/peripheral/manaA (a -device with id=manaA).
Exit 1 with QEMU's error message when the command fails.
"""
import json
import socket
import sys
import time


def connect(path, secs=0.0):
    deadline = time.time() + secs
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            break
        except OSError:
            if time.time() >= deadline:
                raise
            time.sleep(0.2)
    f = s.makefile("rw")
    json.loads(f.readline())  # greeting
    call(f, "qmp_capabilities")
    return f


def call(f, cmd, **args):
    f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r:
            return r["return"]
        if "error" in r:
            sys.exit("qmp: %s: %s" % (cmd, r["error"].get("desc", r["error"])))
        # an asynchronous event: skip


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    sock, cmd = argv[1], argv[2]
    if cmd == "wait":
        connect(sock, float(argv[3]) if len(argv) > 3 else 30.0)
        return
    f = connect(sock, 5.0)
    if cmd == "get" and len(argv) == 5:
        v = call(f, "qom-get", path=argv[3], property=argv[4])
        print(v if isinstance(v, str) else json.dumps(v))
    elif cmd == "set" and len(argv) == 6:
        try:
            value = json.loads(argv[5])
        except ValueError:
            value = argv[5]
        call(f, "qom-set", path=argv[3], property=argv[4], value=value)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
