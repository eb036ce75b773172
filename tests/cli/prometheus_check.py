#!/usr/bin/env python3
"""tests/cli/prometheus_check.py FILE -- validates the Prometheus text
exposition format (version 0.0.4) and prints the samples as JSON.

Checks, each a reason to exit 1 with the line number and the problem:
  - the input is UTF-8 and every line ends with '\\n';
  - every line is a comment ("# HELP name text", "# TYPE name type", other
    '#' lines), an empty line, or a sample: name{label="value",...} value
    [timestamp], with names matching [a-zA-Z_:][a-zA-Z0-9_:]* (labels
    [a-zA-Z_][a-zA-Z0-9_]*), label values quoted with only the escapes
    \\\\, \\" and \\n, no label twice in a sample, and values that are
    floats, NaN, +Inf or -Inf;
  - TYPE is one of counter, gauge, histogram, summary, untyped, appears at
    most once per family and before the family's first sample; HELP at most
    once per family; a family's samples are contiguous (once another
    family's lines start, the family does not come back).

On success prints a JSON list of [name, {labels}, value] (NaN / Inf as
strings) for the caller to check the figures.
"""
import json
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class FormatError(Exception):
    pass


def parse_value(text):
    if text in ("NaN", "+Inf", "-Inf", "Inf"):
        return text
    if not FLOAT.match(text):
        raise FormatError("bad value %r" % text)
    return float(text)


def parse_label_value(line, i):
    """The quoted value starting at line[i] == '"'; returns (value, next i)."""
    if i >= len(line) or line[i] != '"':
        raise FormatError("label value must be quoted")
    i += 1
    out = []
    while i < len(line):
        c = line[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            if i + 1 >= len(line) or line[i + 1] not in '\\"n':
                raise FormatError("bad escape in label value")
            out.append({"\\": "\\", '"': '"', "n": "\n"}[line[i + 1]])
            i += 2
            continue
        if c == "\n":
            raise FormatError("raw newline in label value")
        out.append(c)
        i += 1
    raise FormatError("unterminated label value")


def parse_sample(line):
    match = NAME.match(line)
    if not match:
        raise FormatError("bad metric name")
    name, i = match.group(0), match.end()
    labels = {}
    if i < len(line) and line[i] == "{":
        i += 1
        while True:
            if line[i] == "}":
                i += 1
                break
            match = LABEL_NAME.match(line, i)
            if not match:
                raise FormatError("bad label name")
            label = match.group(0)
            if label in labels:
                raise FormatError("label %s twice" % label)
            i = match.end()
            if line[i] != "=":
                raise FormatError("expected '=' after label name")
            labels[label], i = parse_label_value(line, i + 1)
            if line[i] == ",":
                i += 1
            elif line[i] != "}":
                raise FormatError("expected ',' or '}' after label value")
    rest = line[i:]
    if not rest.startswith(" "):
        raise FormatError("expected a space before the value")
    fields = rest.split()
    if len(fields) not in (1, 2):
        raise FormatError("expected a value and an optional timestamp")
    value = parse_value(fields[0])
    if len(fields) == 2 and not re.match(r"-?\d+$", fields[1]):
        raise FormatError("bad timestamp")
    return name, labels, value


def check(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError("not UTF-8: %s" % error)
    if text and not text.endswith("\n"):
        raise FormatError("the last line does not end with a newline")
    typed, helped, finished, samples = set(), set(), set(), []
    current = None

    def enter(family):
        nonlocal current
        if family != current:
            if family in finished:
                raise FormatError("family %s comes back after another" % family)
            if current is not None:
                finished.add(current)
            current = family

    for number, line in enumerate(text.split("\n")[:-1], 1):
        try:
            if line == "":
                continue
            if line.startswith("#"):
                parts = line.split(None, 3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    if not NAME.fullmatch(parts[2]):
                        raise FormatError("bad metric name in %s" % parts[1])
                    family = parts[2]
                    enter(family)
                    if parts[1] == "TYPE":
                        if family in typed:
                            raise FormatError("second TYPE for %s" % family)
                        if any(s[0] == family for s in samples):
                            raise FormatError("TYPE after samples of %s" % family)
                        if len(parts) != 4 or parts[3] not in TYPES:
                            raise FormatError("bad TYPE line")
                        typed.add(family)
                    else:
                        if family in helped:
                            raise FormatError("second HELP for %s" % family)
                        helped.add(family)
                continue
            name, labels, value = parse_sample(line)
            enter(name)
            samples.append([name, labels, value])
        except (FormatError, IndexError) as error:
            raise FormatError("line %d: %s: %r" % (number, error or "truncated", line))
    return samples


def main():
    data = open(sys.argv[1], "rb").read()
    try:
        samples = check(data)
    except FormatError as error:
        print("prometheus_check: %s" % error, file=sys.stderr)
        sys.exit(1)
    json.dump(samples, sys.stdout)
    print()


if __name__ == "__main__":
    main()
