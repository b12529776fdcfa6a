"""A sandbox uid's kernel keys, locked before its submission runs and removed after (the uid mode, as root).

Run as a script, from its source (``python -I -S -c SOURCE lock`` as the uid, ``... clear UID SERIALS`` as
root): the uid cannot read the grader's folder, so ``uid_leftovers`` passes the text. Standard library only.

Kernel keys outlive processes: a uid's user keyring and user session keyring last until the machine
reboots, its persistent keyring for days. Emptying them afterwards as the uid does not work, because
their owner can take every permission away from itself (``KEYCTL_SETPERM``), and root has no right
over another uid's keyrings either. So:

- ``lock`` (as the uid, before the submission): make the user and user session keyrings and leave a
  holder of them only ``view``, and anyone else ``write`` and ``search``, which is what root needs to
  empty and invalidate them (the kernel makes them with no group). The submission can then add no key
  to either, change no permission (the owner needs ``setattr``) and invalidate neither (``search``).
  Prints their serials.
- ``clear UID SERIALS`` (as root, once the uid's processes are gone): link the uid's persistent keyring
  into this process's keyring (root may), which makes root its holder, then empty and invalidate it and
  the locked keyrings. Invalidated keys are collected at once, so ``/proc/key-users`` soon has no line
  for the uid.
"""

import ctypes
import os
import sys

KEYCTL = {"x86_64": 250, "aarch64": 219}  # the keyctl system call
GET_KEYRING_ID, SETPERM, CLEAR, INVALIDATE, GET_PERSISTENT = 0, 5, 7, 21, 22
USER_KEYRING, USER_SESSION_KEYRING, PROCESS_KEYRING = -4, -5, -2
HOLDER_VIEW = 0x01 << 24  # the possessor's byte: view only
OTHERS_WRITE_SEARCH = 0x04 | 0x08  # the others' byte: write (to empty it) and search (to invalidate it)


def keyctl(libc, number, *args) -> int:
    return libc.syscall(number, *[ctypes.c_long(a) for a in args])


def lock(libc, number) -> list[int]:
    serials = [keyctl(libc, number, GET_KEYRING_ID, ring, 1) for ring in (USER_KEYRING, USER_SESSION_KEYRING)]
    for serial in serials:
        if serial > 0:
            keyctl(libc, number, SETPERM, serial, HOLDER_VIEW | OTHERS_WRITE_SEARCH)
    return serials


def clear(libc, number, uid: int, serials: list[int]) -> None:
    persistent = keyctl(libc, number, GET_PERSISTENT, uid, PROCESS_KEYRING)
    for serial in [persistent, *serials]:
        if serial > 0:
            keyctl(libc, number, CLEAR, serial)
            keyctl(libc, number, INVALIDATE, serial)


def main() -> None:
    number = KEYCTL.get(os.uname().machine)
    if number is None:
        return  # no kernel keys we know how to reach on this machine
    libc = ctypes.CDLL(None, use_errno=True)
    if sys.argv[1] == "lock":
        print(",".join(str(s) for s in lock(libc, number) if s > 0))
    else:
        clear(libc, number, int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",") if s])


if __name__ == "__main__":
    main()
