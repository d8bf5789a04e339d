"""Writes notebooks/report.ipynb, the corpus's notebook with run cells: stdout, an error's
traceback, a rich HTML table and a plot (an image with its alternative text). Run once with
.venv-corpus/bin/python (it starts a kernel); the result is committed, so the corpus shows the
same outputs every time without running them."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def png(width: int = 40, height: int = 20) -> bytes:
    """A small gradient, as a plot library would draw one."""
    rows = b"".join(b"\x00" + bytes((x * 6) % 256 for x in range(width * 3)) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    image = base64.b64encode(png()).decode()
    table = (
        "<table><caption>Top regions</caption><thead><tr><th>Region</th><th>Sales</th></tr>"
        "</thead><tbody><tr><td>North</td><td>1,204</td></tr><tr><td>South</td><td>987</td>"
        "</tr></tbody></table>"
    )
    plot = f'<img alt="Line plot of revenue by quarter" src="data:image/png;base64,{image}">'
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(
            "# Sales report\n\nSome **bold** words and a [link](https://example.org).\n\n"
            f"![Bar chart of monthly sales](data:image/png;base64,{image})"
        ),
        nbformat.v4.new_code_cell("n = sum(i * i for i in range(1000))\nprint(f'RESULT={n}')"),
        nbformat.v4.new_code_cell("1 / 0"),
        nbformat.v4.new_code_cell(f"from IPython.display import HTML\nHTML({table!r})"),
        nbformat.v4.new_code_cell(f"from IPython.display import HTML\nHTML({plot!r})"),
        nbformat.v4.new_code_cell(""),
    ]
    NotebookClient(notebook, timeout=60, allow_errors=True).execute()
    nbformat.write(notebook, HERE / "notebooks" / "report.ipynb")


if __name__ == "__main__":
    main()
