"""Flow collections of mca's YAML subset: [a, b], {k: v}, nested, over several lines."""

from __future__ import annotations

from mca.skills.yaml.scalar import INDICATORS, Value, YamlError, decode_double, decode_single


class Incomplete(Exception):
    """The flow collection continues on the next line."""


class Flow:
    """Recursive descent over one flow collection: [a, b], {k: v}, nested."""

    def __init__(self, text: str, line: int) -> None:
        self.s = text
        self.i = 0
        self.line = line

    def parse(self) -> tuple[Value, int]:
        value = self.node()
        return value, self.i

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\n":
            self.i += 1
        if self.i >= len(self.s):
            raise Incomplete

    def node(self) -> Value:
        self.ws()
        c = self.s[self.i]
        if c == "[":
            return self.seq()
        if c == "{":
            return self.map()
        if c in "\"'":
            return self.quoted()
        if c in "&*!":
            raise YamlError(
                self.line,
                {"&": "anchor", "*": "alias", "!": "tag"}[c],
                "anchors, aliases and tags are not supported",
            )
        return self.plain()

    def seq(self) -> list[Value]:
        self.i += 1
        out: list[Value] = []
        while True:
            self.ws()
            if self.s[self.i] == "]":
                self.i += 1
                return out
            item = self.node()
            self.ws()
            if self.s[self.i] == ":" and isinstance(item, str):  # [a: b] is a one-pair map
                self.i += 1
                out.append({item: self.node()})
                self.ws()
            else:
                out.append(item)
            self.sep("]")

    def map(self) -> dict[str, Value]:
        self.i += 1
        out: dict[str, Value] = {}
        while True:
            self.ws()
            if self.s[self.i] == "}":
                self.i += 1
                return out
            key = self.node()
            if not isinstance(key, str):
                raise YamlError(self.line, "complex-key", "flow map keys must be scalars")
            self.ws()
            value: Value = ""
            if self.s[self.i] == ":":
                self.i += 1
                self.ws()
                if self.s[self.i] not in ",}":
                    value = self.node()
            out[key] = value
            self.ws()
            self.sep("}")

    def sep(self, close: str) -> None:
        self.ws()
        c = self.s[self.i]
        if c == ",":
            self.i += 1
        elif c != close:
            raise YamlError(self.line, "flow", f"expected ',' or '{close}' in a flow collection")

    def quoted(self) -> str:
        q = self.s[self.i]
        j = self.i + 1
        while True:
            if j >= len(self.s):
                raise Incomplete
            if q == '"' and self.s[j] == "\\":
                j += 2
                continue
            if self.s[j] == q:
                if q == "'" and self.s[j + 1 : j + 2] == "'":
                    j += 2
                    continue
                break
            j += 1
        body = self.s[self.i + 1 : j]
        self.i = j + 1
        return decode_single(body) if q == "'" else decode_double(body, self.line)

    def plain(self) -> str:
        start = self.i
        head = self.s[start : start + 2]
        if head[:1] in INDICATORS or head in ("- ", "? ", ": ", "-,", "-]", "-}", "?,", "?]"):
            raise YamlError(
                self.line, "indicator", f"a plain value cannot start with {head[:1]!r} (quote it)"
            )
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in ",[]{}":
                break
            if c == ":" and (self.i + 1 >= len(self.s) or self.s[self.i + 1] in " ,]}"):
                break
            if c == "#" and self.s[self.i - 1] in " \t":
                raise YamlError(self.line, "comment", "a comment inside a flow collection")
            self.i += 1
        if self.i >= len(self.s):
            raise Incomplete
        return self.s[start : self.i].strip()
