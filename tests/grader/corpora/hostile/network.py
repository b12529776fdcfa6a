"""Hostile: connects to a listener the test started on 127.0.0.1 and sends its mark.
Implements nothing: expected 0."""
import socket

try:
    with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
        s.sendall(MARK.encode())
except OSError:
    pass
