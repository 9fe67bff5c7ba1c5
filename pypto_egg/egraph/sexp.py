"""egglog text's top-level s-expressions, read once by whoever needs their shape (the rule index, the fact tables)."""

from __future__ import annotations

from dataclasses import dataclass

SExp = str | list["SExp"]


@dataclass(frozen=True)
class Form:
    start: int  # offsets of the form in its file's text
    end: int
    tree: SExp


def forms(text: str) -> list[Form]:
    """The top-level s-expressions of egglog text, with their spans; strings are kept as one token."""
    out: list[Form] = []
    stack: list[list[SExp]] = []
    start = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if stack:
                stack[-1].append(text[i : j + 1])
            i = j + 1
            continue
        if c == "(":
            if not stack:
                start = i
            stack.append([])
        elif c == ")":
            if not stack:
                raise ValueError("unbalanced ')'")
            done = stack.pop()
            if stack:
                stack[-1].append(done)
            else:
                out.append(Form(start, i + 1, done))
        elif not c.isspace():
            j = i
            while j < n and not text[j].isspace() and text[j] not in '();"':
                j += 1
            if stack:
                stack[-1].append(text[i:j])
            i = j
            continue
        i += 1
    if stack:
        raise ValueError("unbalanced '('")
    return out
