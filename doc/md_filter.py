"""Doxygen input filter for doc/*.md: writes the page to stdout with every ' inside an
inline code span spelled &apos;, which renders the same.

Doxygen 1.9.4 (Debian 12) misreads a ' inside a code span as the start of a quoted
string, so a later `<dir>` on the page is taken for an HTML tag and fails the docs build.
Fenced code blocks and the text outside code spans are left as they are; the number of
lines does not change, so warnings keep their line numbers.

    python3 doc/md_filter.py doc/errors.md
"""

import re
import sys

SPAN = re.compile(r"(`+)(.+?)\1")


def main(path: str) -> None:
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced:
                line = SPAN.sub(lambda m: m[1] + m[2].replace("'", "&apos;") + m[1], line)
            sys.stdout.write(line)


if __name__ == "__main__":
    main(sys.argv[1])
