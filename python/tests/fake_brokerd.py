"""A stand-in for sluice-brokerd that answers every SUBSCRIBE naming one segment, run under
another uid than the tests' so that the uid the client reads off its control socket
(SO_PEERCRED) is told apart from the reader's own.

    fake_brokerd.py UID FD SEGMENT_DIR SEGMENT_NAME OBJECT_KIND SCHEMA_HEX

Started as root, it becomes UID once its modules are loaded (the interpreter may lie where UID
cannot read). FD is a Unix socket bound by the parent, listened on here as UID (the peer
credentials a client sees are the listener's when it called listen(2)), then says
"listening".
"""

import os

import socket
import struct
import sys
import threading

from sluice import protocol
from sluice.protocol import Frame, ObjectKind


def serve(connection: socket.socket, subscribed_id: int, answer) -> None:
    with connection:
        while True:
            head = connection.recv(4, socket.MSG_WAITALL)
            if len(head) < 4:
                return
            (length,) = struct.unpack("<I", head)
            frame = protocol.decode(head + connection.recv(length, socket.MSG_WAITALL))
            if isinstance(frame.message, protocol.Heartbeat):
                reply = protocol.Heartbeat(frame.message.time_ns, 10_000_000_000)
            elif isinstance(frame.message, protocol.Subscribe):
                reply = protocol.Subscribed(subscribed_id, *answer)
            else:
                continue  # RELEASE, CLOSE: nothing to answer
            connection.sendall(protocol.encode(Frame(frame.request_id, reply)))


def main() -> None:
    uid, fd, segment_dir, segment_name, kind, schema_hex = sys.argv[1:]
    os.setgroups([])
    os.setgid(int(uid))
    os.setuid(int(uid))
    answer = (ObjectKind(int(kind)), 0, (0,), segment_name, bytes.fromhex(schema_hex), segment_dir)
    listener = socket.socket(fileno=int(fd))
    listener.listen()
    print("listening", flush=True)
    subscribed_id = 0
    while True:
        connection, _ = listener.accept()
        subscribed_id += 1
        threading.Thread(target=serve, args=(connection, subscribed_id, answer),
                         daemon=True).start()


if __name__ == "__main__":
    main()
