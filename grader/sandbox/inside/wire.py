"""The wire between the grader and a submission's child: frames, values and answers, described once here.

Both sides import this module: the grader as ``grader.sandbox.inside.wire`` (``session.py``), the child as
part of the folder bound into the sandbox (``serving.py``). It imports only the standard library; numpy is
passed in by the caller (the child imports it only once the grader has said where it lives). The R runner
(``r_runner.R``) speaks the same frames and values; its constants (``FRAME_HEAD_BYTES``, ``TOKEN_BYTES``,
``FLOAT64_BYTES``) are checked against these by ``tests/grader/sandbox/inside/test_wire.py``.

Frames. Every message, both ways, is one frame::

    token (16 bytes) | header length (u32 LE) | blob length (u64 LE) | header | blob

The header is UTF-8 JSON (an object), the blob raw bytes. The token is the grader's random one for this
child; the child repeats it on every frame it writes, and the grader refuses a frame without it, a header
over ``MAX_HEADER`` bytes or a blob over 8 bytes times the submission's entry cap before reading either.

Values (an argument, either way) are JSON descriptors, with arrays' numbers in the blob:

- ``{"kind": "scalar", "value": int | bool}``: an int within ``MAX_SCALAR``, or a bool;
- ``{"kind": "list", "items": [descriptor, ...]}``: at most ``MAX_ITEMS`` items, nested ``MAX_NESTING`` deep;
- ``{"kind": "matrix", "shape": [d0, d1, ...], "offset": BYTE}``: an array of any rank from 0 to ``MAX_RANK``
  (the kind's name is from when every array was 2-D), each dimension at most ``MAX_DIM``, its entries float64
  little-endian in C order from ``offset`` of the blob.

One call's arguments are at most ``MAX_ITEMS`` values, keywords at most ``MAX_NAME`` characters. Shapes, sizes
and offsets are checked before anything is allocated, with an entry budget spent across all the arrays.

Grader to child:

- first frame: the config (an object: ``grader/sandbox/child_config.py`` writes the loading part) and the
  submission's source as the blob;
- then one call at a time: ``{"id": N, "function": NAME, "args": [descriptor], "kwargs": {NAME: descriptor}}``
  and optionally ``"helpers": [NAME, ...]``: during this call those names of the submission's module answer
  through the grader (a helper request, below);
- the answer to a helper request: ``{"id": N, "ok": true, "shape": [...], "dtype": "float64"}`` with the
  entries as the blob, or ``{"id": N, "ok": false, "error": TEXT}``.

Child to grader:

- after loading: ``{"ready": true, "functions": [NAME], "skipped": [...]}`` or ``{"ready": false, "error": TEXT,
  "error_type": NAME, "line": INT}``;
- during a call that named helpers, any number of helper requests ``{"id": N, "helper": NAME, "args": [...],
  "kwargs": {...}}`` (blob as for a call), each waiting for its answer;
- then the call's answer, of one of these kinds:

  - an array: ``{"id": N, "ok": true, "shape": [...], "dtype": NAME}`` with the entries as float64 in the blob;
  - a JSON answer (``ANSWER_JSON``): ``{"id": N, "ok": true, "kind": "json"}`` with UTF-8 JSON of at most
    ``MAX_JSON`` bytes as the blob (the grader reads no more); only the grader's own entry points (the config's
    ``harness``: question 2's driver, ``grader/module/harness.py``) answer so, when they return a dict;
  - too big: ``{"id": N, "ok": false, "too_big": ENTRIES}``;
  - an error: ``{"id": N, "ok": false, "stage": "call" | "convert", "dtype": NAME, "error": TEXT,
    "error_type": NAME, "line": INT}``.

The expected answers, the reference and the case generator never cross this wire: the grader parses the
numbers and judges them itself. Every byte the grader reads from the child is hostile data, checked here
before use.
"""

import json
import os
import struct

# Every frame starts so, both ways: the token, the header length, the blob length.
FRAME_HEAD = struct.Struct("<16sIQ")
TOKEN_BYTES = 16
MAX_HEADER = 64 * 1024  # bytes of one header the grader reads
# What a descriptor may hold: both sides decode with these caps, and the grader turns anything beyond them into
# a protocol error. No dimension reaches 2**31, so no product of MAX_RANK of them overflows numpy's 64-bit
# sizes before the entry cap is checked.
MAX_RANK = 64  # numpy 2's most dimensions
MAX_DIM = 2**31 - 1
MAX_ITEMS = 256  # entries of one list, and arguments of one call
MAX_NESTING = 4  # lists within lists
MAX_NAME = 256  # characters of a keyword
MAX_SCALAR = 2**64  # the widest int sent (a torch seed takes 64 bits)
MAX_JSON = 1 << 18  # bytes of one JSON answer
FLOAT64 = "<f8"
FLOAT64_BYTES = 8
ANSWER_JSON = "json"  # the "kind" of a JSON answer's header


class WireError(ValueError):
    """Bytes that are not a frame, a value or an answer as the module docstring describes them."""


# ------------------------------------------------------------------------------------------- frames
def read_exact(fd, n):
    """Exactly ``n`` bytes from ``fd``; EOFError if it closes first."""
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the grader closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd):
    """(token, header, blob) of the next frame on ``fd`` (the child's side: the grader is trusted)."""
    token, header_len, blob_len = FRAME_HEAD.unpack(read_exact(fd, FRAME_HEAD.size))
    return token, json.loads(read_exact(fd, header_len)), read_exact(fd, blob_len)


def frame(token, header, blob=b""):
    """The bytes of one frame: ``header`` (an object) as JSON, then ``blob``."""
    data = json.dumps(header).encode()
    return FRAME_HEAD.pack(token, len(data), len(blob)) + data + blob


# ------------------------------------------------------------------------------------------- values
def encode_values(args, kwargs, np):
    """``args`` and ``kwargs`` as descriptors, and the blob that holds their arrays' entries."""
    blob = bytearray()

    def enc(value):
        if isinstance(value, (bool, np.bool_)):
            return {"kind": "scalar", "value": bool(value)}
        if isinstance(value, (int, np.integer)):
            return {"kind": "scalar", "value": int(value)}
        if isinstance(value, (list, tuple)):
            return {"kind": "list", "items": [enc(v) for v in value]}
        if hasattr(value, "detach"):  # a torch tensor: leave autograd and the GPU behind
            value = value.detach().cpu()
        array = np.array(value, dtype=FLOAT64, order="C")  # a float stays 0-D (ascontiguousarray makes it 1-D)
        offset = len(blob)
        blob.extend(array.tobytes())
        return {"kind": "matrix", "shape": [int(s) for s in array.shape], "offset": offset}

    return [enc(a) for a in args], {str(k): enc(v) for k, v in kwargs.items()}, bytes(blob)


def array_from(shape, blob, offset, np, budget):
    """The float64 array ``shape`` describes at ``offset`` of ``blob``, a copy; ``budget`` is a one-item list of
    the entries still allowed, spent here. Every field is checked before anything is allocated."""
    if type(shape) is not list or len(shape) > MAX_RANK or not all(type(d) is int and 0 <= d <= MAX_DIM
                                                                   for d in shape):
        raise WireError("a shape that is not a list of sizes")
    size = 1
    for d in shape:
        size *= d
    if size > budget[0]:
        raise WireError("more entries than allowed")
    if type(offset) is not int or offset < 0 or offset + FLOAT64_BYTES * size > len(blob):
        raise WireError("entries outside the blob")
    budget[0] -= size
    try:
        if size == 0:
            return np.zeros(shape, dtype=np.float64)
        return np.frombuffer(blob, dtype=FLOAT64, count=size, offset=offset).reshape(shape).astype(np.float64)
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:  # e.g. (0, 2**31 - 1, ...): too big to make
        raise WireError(f"a shape numpy cannot make: {exc}") from None


def decode_values(args, kwargs, blob, np, max_entries):
    """The arguments ``args`` (a list of descriptors) and ``kwargs`` (a name -> descriptor object) describe;
    WireError for anything else, with at most ``max_entries`` entries in all."""
    budget = [max_entries]

    def dec(desc, depth):
        kind = desc.get("kind") if type(desc) is dict else None
        if kind == "scalar":
            value = desc.get("value")
            if type(value) is bool or (type(value) is int and -MAX_SCALAR <= value <= MAX_SCALAR):
                return value
            raise WireError("a scalar that is not an int or a bool")
        if kind == "list" and depth < MAX_NESTING:
            items = desc.get("items")
            if type(items) is not list or len(items) > MAX_ITEMS:
                raise WireError("a list that is not a list of values")
            return [dec(item, depth + 1) for item in items]
        if kind == "matrix":
            return array_from(desc.get("shape"), blob, desc.get("offset"), np, budget)
        raise WireError("a value of no known kind")

    if type(args) is not list or type(kwargs) is not dict or len(args) + len(kwargs) > MAX_ITEMS:
        raise WireError("arguments that are not a list and an object")
    if not all(type(k) is str and len(k) <= MAX_NAME for k in kwargs):  # "w:NAME" keywords are not identifiers
        raise WireError("a keyword that is not a name")
    return [dec(a, 0) for a in args], {k: dec(v, 0) for k, v in kwargs.items()}


# ------------------------------------------------------------------------------------------ answers
def json_from(blob):
    """The value a JSON answer's blob holds; WireError for one too long, not UTF-8 or not JSON."""
    if len(blob) > MAX_JSON:
        raise WireError("a JSON answer longer than allowed")
    try:
        return json.loads(blob.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested past the parser's depth
        raise WireError("a JSON answer that is not JSON") from None
