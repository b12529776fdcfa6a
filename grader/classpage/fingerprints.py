"""A hand-in's fingerprints: winnowed hashes of its normalised code, the same in every process.

The code is split into tokens by Pygments (Python's lexer or R's), and each token is written as what a
disguise does not change: every name the student chose is ``V`` (so renaming changes nothing), every string
``S``, comments, docstrings and layout are dropped; keywords, operators, numbers, the language's own functions
(``len``, ``exp``, ``apply``) and attributes after ``.`` or ``$`` (``np.exp``) stay as written. A fingerprint is
the hash of ``K`` consecutive tokens; winnowing (Schleimer, Wilkerson and Aiken, "Winnowing", SIGMOD 2003, the
method of MOSS) keeps the smallest hash of every ``WINDOW`` consecutive ones, so that any common run of
``K + WINDOW - 1`` tokens is always found. The hash is BLAKE2b of the tokens, never Python's ``hash()``, which is
salted per process: the same file has the same fingerprints under any ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

K = 6  # tokens per fingerprint: shorter common runs are never counted
WINDOW = 3  # any common run of K + WINDOW - 1 tokens is always found
ASSIGN = {"=", "<-", "<<-", "->", "->>"}


@dataclass(frozen=True)
class Token:
    text: str  # as normalised: V, S, or the token itself
    start: int  # character range in the source
    end: int
    opens: bool = False  # the first token of a top-level definition: no fingerprint spans two of them


def _lexer(language: str):
    from pygments.lexers import PythonLexer, SLexer  # loaded only when a class page is made

    return SLexer() if language == "r" else PythonLexer()


def tokens(source: str, language: str = "python") -> list[Token]:
    """``source`` as normalised tokens, each with the characters it came from."""
    from pygments.token import Comment, Name, String

    raw = [(at, kind, value) for at, kind, value in _lexer(language).get_tokens_unprocessed(source)
           if value.strip() and kind not in Comment and kind not in String.Doc]
    defined = {value for (_, kind, value), (_, _, following) in zip(raw, raw[1:] + [(0, None, "")], strict=True)
               if kind in Name and following in ASSIGN}  # R: a function the student wrote is theirs to name
    members = (".", "$", "@") if language == "r" else (".",)  # Python's @ is a product, R's a slot
    out: list[Token] = []
    for i, (at, kind, value) in enumerate(raw):
        end = at + len(value)
        after_member = i > 0 and raw[i - 1][2] in members
        if kind in String:
            if out and out[-1].text == "S" and raw[i - 1][1] in String:  # one string, lexed in pieces
                out[-1] = Token("S", out[-1].start, end)
                continue
            text = "S"
        elif kind in Name.Builtin or after_member:
            text = value
        elif kind in Name.Function and language == "r" and value not in defined:
            text = value  # R's own functions (exp, apply, t) as Python's builtins
        elif kind in Name:
            text = "V"
        else:  # keywords, operators, punctuation, numbers
            text = value
        line_start = at == 0 or source[at - 1] == "\n"
        opens = line_start and (value in ("def", "class") or language == "r" and kind in Name)
        out.append(Token(text, at, end, opens))
    return out


def _hash(parts: list[str]) -> int:
    return int.from_bytes(hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest(), "big")


def _pieces(toks: list[Token]) -> list[tuple[int, int]]:
    """Token ranges of the file's top-level pieces (each definition with what follows it up to the next), so
    that functions put in another order keep every fingerprint."""
    cuts = [i for i, t in enumerate(toks) if t.opens and i > 0]
    return list(zip([0, *cuts], [*cuts, len(toks)], strict=True))


def kgrams(toks: list[Token]) -> list[tuple[int, int, int]]:
    """``(hash, first token, last token)`` of every run of ``K`` tokens inside one piece; a piece shorter than
    ``K`` (``return X @ W``) is one run of its own."""
    texts = [t.text for t in toks]
    out = []
    for a, b in _pieces(toks):
        if b - a < K:
            out.append((_hash(texts[a:b]), a, b - 1))
        else:
            out += [(_hash(texts[i:i + K]), i, i + K - 1) for i in range(a, b - K + 1)]
    return out


def kgram_hashes(toks: list[Token]) -> list[int]:
    return [h for h, _, _ in kgrams(toks)]


@dataclass(frozen=True)
class Fingerprints:
    """The winnowed hashes of one file, each with the character ranges of the runs it stands for."""

    spans: dict[int, list[tuple[int, int]]]


def fingerprint(source: str, language: str = "python", leave_out: frozenset[int] = frozenset()) -> Fingerprints:
    """The winnowed fingerprints of ``source``, those in ``leave_out`` (the starter file's) never kept."""
    toks = tokens(source, language)
    runs = kgrams(toks)
    hashes = [h for h, _, _ in runs]
    chosen: dict[int, list[tuple[int, int]]] = {}
    last = -1
    for w in range(max(0, len(hashes) - WINDOW + 1) if len(hashes) >= WINDOW else min(1, len(hashes))):
        window = hashes[w:w + WINDOW]
        # the rightmost smallest hash of the window (Schleimer et al.'s robust winnowing)
        at = w + max(range(len(window)), key=lambda j: (-window[j], j))
        if at == last:
            continue
        last = at
        h, first, last_token = runs[at]
        if h not in leave_out:
            chosen.setdefault(h, []).append((toks[first].start, toks[last_token].end))
    return Fingerprints(chosen)
