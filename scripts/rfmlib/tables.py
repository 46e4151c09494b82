"""Plain-text tables: the one layout of every table the driver prints."""


def table_lines(header, rows):
    """Columns as wide as their widest cell, two spaces apart; no line
    ends in blanks."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    widths[-1] = 0
    fmt = "  ".join("%%-%ds" % w for w in widths)
    return [(fmt % tuple(r)).rstrip() for r in [header] + rows]


def format_table(header, rows):
    return "\n".join(table_lines(header, rows))
