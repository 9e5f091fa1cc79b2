"""Einstein-summation subscripts, read and checked as `np.einsum` reads them.

    "ij,jk->ik"      explicit output
    "ij,jk"          implicit output: labels that occur once, in ASCII order
    "...ij,...jk"    `...` broadcasts the leading dimensions (right-aligned)
    "ii->i"          a label repeated within an operand takes its diagonal

`parse(subscripts, shapes)` returns one label tuple per operand (the `...`
dimensions get private labels), the output labels and the size of every
label; bad input raises ValueError naming the subscript and the operand,
in NumPy's words where NumPy has them. Dimensions of size 1 broadcast
against any size, as in NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

ELLIPSIS_BASE = 0x2460
"""Private labels of the `...` dimensions: ① ② ③ … (never a letter)."""


def is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def ellipsis_label(k: int) -> str:
    """The label of the k-th broadcast dimension, counted from the right."""
    return chr(ELLIPSIS_BASE + k)


def show(label: str) -> str:
    """A label as users wrote it: letters as is, broadcast dimensions as '...'."""
    return label if is_letter(label) else f"... (broadcast dimension {ord(label) - ELLIPSIS_BASE})"


@dataclass(frozen=True)
class Subscripts:
    """Checked subscripts: labels per operand (dimension order), output labels, sizes."""

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]
    sizes: dict[str, int]
    text: str

    @property
    def normalized(self) -> str:
        """`ij,jk->ik` with `...` dimensions spelled as their private labels."""
        return ",".join("".join(t) for t in self.inputs) + "->" + "".join(self.output)


def _term(term: str, position: str) -> tuple[list[str], bool]:
    """Letters of one term and whether it has `...` (which must be one whole `...`)."""
    head, dots, tail = term.partition("...")
    if "." in head or "." in tail:
        raise ValueError(f"einstein sum subscripts string contains a '.' that is not part of an "
                         f"ellipsis ('...') in {position}")
    for c in head + tail:
        if not is_letter(c):
            raise ValueError(f"invalid subscript '{c}' in einstein sum subscripts string ({position}), "
                             f"subscripts must be letters")
    letters = list(head) + (["..."] if dots else []) + list(tail)
    return letters, bool(dots)


def from_sublists(operands_and_sublists: Sequence) -> tuple[str, list]:
    """NumPy's other form, `einsum(A, [0, 1], B, [1, 2], [0, 2])`, as a subscripts string."""
    items = list(operands_and_sublists)
    operands, terms = items[0::2], items[1::2]
    output = None
    if len(items) % 2 == 1:
        output = items[-1]
        operands = items[0:-1:2]
        terms = items[1:-1:2]

    def letters(sub) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 52:
                out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
            else:
                raise ValueError(f"subscript lists hold integers in [0, 52) or Ellipsis, got {s!r}")
        return "".join(out)

    text = ",".join(letters(t) for t in terms)
    if output is not None:
        text += "->" + letters(output)
    return text, operands


def parse(subscripts: str, shapes: Sequence[Sequence[int]]) -> Subscripts:
    """Check `subscripts` against the operands' shapes; ValueError/TypeError on bad input."""
    if not isinstance(subscripts, str):
        raise TypeError(f"subscripts must be a string, got {type(subscripts).__name__}")
    text = subscripts.replace(" ", "")
    if text.count("->") > 1 or ("->" not in text and ("-" in text or ">" in text)):
        raise ValueError(f"einstein sum subscripts string {subscripts!r} has a stray '-' or '>'; "
                         f"write one '->' before the output")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"the subscripts {subscripts!r} name {len(terms)} operand"
                         f"{'s' if len(terms) != 1 else ''}, but {len(shapes)} "
                         f"{'were' if len(shapes) != 1 else 'was'} given")
    parsed = [_term(t, f"operand {k}") for k, t in enumerate(terms)]

    # Expand `...` into private labels, right-aligned across operands.
    inputs: list[tuple[str, ...]] = []
    ellipsis_rank = 0
    for k, ((letters, has_dots), shape) in enumerate(zip(parsed, shapes)):
        named = len(letters) - has_dots
        if len(shape) < named or (not has_dots and len(shape) != named):
            raise ValueError(f"operand {k} has {len(shape)} dimension{'s' if len(shape) != 1 else ''} "
                             f"but its subscripts '{terms[k]}' name {named}"
                             + (" (too many indices)" if len(shape) < named else ""))
        rank = len(shape) - named if has_dots else 0
        ellipsis_rank = max(ellipsis_rank, rank)
        labels: list[str] = []
        for c in letters:
            if c == "...":
                labels += [ellipsis_label(rank - 1 - j) for j in range(rank)]
            else:
                labels.append(c)
        inputs.append(tuple(labels))
    broadcast = [ellipsis_label(ellipsis_rank - 1 - j) for j in range(ellipsis_rank)]

    sizes = _sizes(inputs, shapes)
    if arrow:
        out_letters, out_dots = _term(rhs, "the output")
        output: list[str] = []
        for c in out_letters:
            output += broadcast if c == "..." else [c]
        if not out_dots and ellipsis_rank:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, but "
                             "no '...' ellipsis provided to broadcast the extra dimensions.")
        seen: set[str] = set()
        for c in output:
            if c in seen:
                raise ValueError(f"einstein sum subscripts string includes output subscript '{c}' "
                                 f"multiple times")
            seen.add(c)
            if c not in sizes:
                raise ValueError(f"einstein sum subscripts string included output subscript '{c}' "
                                 f"which never appeared in an input")
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for c in labels:
                counts[c] = counts.get(c, 0) + 1
        once = sorted(c for c, n in counts.items() if n == 1 and is_letter(c))
        output = broadcast + once
    return Subscripts(tuple(inputs), tuple(output), sizes, subscripts)


def _sizes(inputs: Sequence[tuple[str, ...]], shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """The size of every label; a dimension of size 1 broadcasts, others must agree."""
    sizes: dict[str, int] = {}
    where: dict[str, int] = {}
    for k, (labels, shape) in enumerate(zip(inputs, shapes)):
        own: dict[str, int] = {}
        for label, n in zip(labels, shape):
            n = int(n)
            if label in own and own[label] != n:
                raise ValueError(f"dimensions in operand {k} for collapsing index '{show(label)}' "
                                 f"don't match ({own[label]} != {n})")
            own[label] = n
        for label, n in own.items():
            known = sizes.get(label)
            if known is None or known == 1:
                sizes[label] = n
                where[label] = k
            elif n != 1 and n != known:
                raise ValueError(f"size of subscript '{show(label)}' is {known} in operand "
                                 f"{where[label]} but {n} in operand {k}; they must be equal "
                                 f"(or 1, which broadcasts)")
    return sizes
