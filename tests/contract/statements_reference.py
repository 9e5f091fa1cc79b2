"""NumPy's reading of statements in index notation (the tests' oracle), written apart from
tinyc's parser: statements run in order, each term an np.einsum, temporaries in a dict.

`run(statements, tensors, scalars)` returns every tensor afterwards (arguments and
temporaries) and, for error bounds, the same program on absolute values
(`magnitudes`): |computed - exact| <= gamma * magnitude elementwise for sums of
products (Higham, Accuracy and Stability, §3.1), with gamma from `bound_terms`.
"""

from __future__ import annotations

import re
import string

import numpy as np

_STATEMENT = re.compile(r"^\s*(\w+)\[([\w,\s]*)\]\s*(\+=|-=|=)\s*(.*?)\s*$")
_ACCESS = re.compile(r"^(\w+)\[([\w,\s]*)\]$")


def _labels(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _terms(rhs: str) -> list[tuple[float, str]]:
    """(sign, term text) for each term: split at + and - outside brackets and numbers' exponents."""
    out, sign, current, depth = [], 1.0, "", 0
    for k, ch in enumerate(rhs):
        depth += ch == "["
        depth -= ch == "]"
        exponent = k > 0 and rhs[k - 1] in "eE" and k > 1 and rhs[k - 2].isdigit()
        if ch in "+-" and depth == 0 and not exponent:
            if current.strip():
                out.append((sign, current))
            elif ch == "-":
                sign = -sign
                continue
            sign, current = (-1.0 if ch == "-" else 1.0), ""
            continue
        current += ch
    out.append((sign, current))
    return out


def _powers(term: str) -> str:
    """`x**n` written out as n factors (`/ h**2` as `/ h / h`)."""
    def expand(match):
        op, base, n = match.group(1), match.group(2), int(match.group(3))
        joint = f" {op or '*'} "
        return (f"{op} " if op else "") + joint.join([base] * n)

    return re.sub(r"([*/]?)\s*([\w.]+)\s*\*\*\s*(\d+)", expand, term)


def run(statements, tensors, scalars, absolute=False):
    env = {name: (np.abs(a) if absolute else a).astype(np.complex128 if np.iscomplexobj(a) else np.float64)
           for name, a in tensors.items()}
    for text in statements:
        name, target_text, op, rhs = _STATEMENT.match(text).groups()
        target = _labels(target_text)
        sizes = {}
        if name in env:
            sizes.update(zip(target, env[name].shape))
        values = []
        for sign, term in _terms(rhs):
            coefficient, operands = sign, []
            factors = re.split(r"\s*([*/])\s*", _powers(term.strip()))
            divide = False
            for factor in factors:
                if factor in "*/":
                    divide = factor == "/"
                    continue
                access = _ACCESS.match(factor)
                if access:
                    operands.append((env[access.group(1)], _labels(access.group(2))))
                    sizes.update(zip(operands[-1][1], operands[-1][0].shape))
                    continue
                value = float(factor) if re.match(r"^[\d.]", factor) else scalars[factor]
                value = abs(value) if absolute else value
                coefficient = coefficient / value if divide else coefficient * value
            values.append((abs(coefficient) if absolute else coefficient, operands))
        letters = {}
        for label in list(sizes) + target:
            letters.setdefault(label, string.ascii_letters[len(letters)])
        total = 0
        for coefficient, operands in values:
            held = [label for label in target if any(label in labels for _, labels in operands)]
            spec = ",".join("".join(letters[x] for x in labels) for _, labels in operands)
            spec += "->" + "".join(letters[x] for x in held)
            part = coefficient * np.einsum(spec, *[a for a, _ in operands])
            shape = [sizes[label] if label in held else 1 for label in target]
            total = total + np.broadcast_to(part.reshape(shape), [sizes[x] for x in target])
        if op == "=":
            env[name] = np.array(total)
        else:
            env[name] = env[name] + total if op == "+=" else env[name] - total
            if absolute:
                env[name] = env[name] + 2 * total  # |x - y| <= |x| + |y|
    return env


def bound_terms(statements, tensors) -> int:
    """A generous count of the roundings along any result: per statement the longest sum
    (the product of the sizes of the labels a term sums over) plus its factors and terms."""
    n = 0
    sizes = {}
    for text in statements:
        _, target_text, _, rhs = _STATEMENT.match(text).groups()
        target = set(_labels(target_text))
        longest = 1
        for _, term in _terms(rhs):
            summed = 1
            for name, labels in re.findall(r"(\w+)\[([\w,\s]*)\]", term):
                for label, size in zip(_labels(labels), np.shape(tensors.get(name, ()))):
                    sizes[label] = size
                for label in set(_labels(labels)) - target:
                    summed *= sizes.get(label, 64)
            longest = max(longest, summed + term.count("*") + term.count("/") + 2)
        n += longest + len(_terms(rhs))
    return n


def assert_close(got, want, magnitude, n, dtype):
    """|got - want| <= 2 n eps(dtype) |magnitude| elementwise (plus the smallest normal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    eps = np.finfo(np.dtype(dtype)).eps
    tiny = np.finfo(np.dtype(dtype)).tiny
    limit = 2 * n * eps * np.abs(magnitude) + tiny
    excess = np.abs(got - want) - limit
    worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else ()
    assert not excess.size or excess.max() <= 0, (
        f"at {worst}: got {got[worst]}, want {want[worst]}, bound {limit[worst]}")
