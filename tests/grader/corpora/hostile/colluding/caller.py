"""Colluding pair, second half: for 3 s from its import, keeps trying to reach its partner (listener.py)
on the abstract Unix socket named MARK and on 127.0.0.1:PORT, and reports what answered. Implements
nothing: expected 0."""
import socket
import time

START = time.time()
reached = {}
while time.time() < START + 3:
    for name, family, address in (("unix", socket.AF_UNIX, "\0" + MARK),
                                  ("tcp", socket.AF_INET, ("127.0.0.1", PORT))):
        if name not in reached:
            try:
                with socket.socket(family, socket.SOCK_STREAM) as conn:
                    conn.settimeout(0.2)
                    conn.connect(address)
                    reached[name] = conn.recv(16).decode()
            except OSError:
                pass
    time.sleep(0.05)
END = time.time()


def project(X, W):
    raise ValueError(f"CALLER reached {sorted(reached.items())} from {START:.3f} to {END:.3f}")
