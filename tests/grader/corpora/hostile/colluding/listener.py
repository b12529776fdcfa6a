"""Colluding pair, first half: offers answers to whoever connects, on the abstract Unix socket named MARK
and on 127.0.0.1:PORT inside the sandbox, for 3 s from its import, while its partner (caller.py) is
graded beside it in the same batch. Implements nothing: expected 0."""
import select
import socket
import time

START = time.time()
offered = []
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
unix.bind("\0" + MARK)
unix.listen(8)
offered.append(unix)
try:
    offered.append(socket.create_server(("127.0.0.1", PORT)))
except OSError:
    pass
while time.time() < START + 3:
    ready, _, _ = select.select(offered, [], [], 0.05)
    for server in ready:
        conn, _ = server.accept()
        conn.sendall(b"answers")
        conn.close()
END = time.time()


def project(X, W):
    raise ValueError(f"LISTENER offered {len(offered)} channels from {START:.3f} to {END:.3f}")
