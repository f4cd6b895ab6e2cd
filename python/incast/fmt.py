"""One way to write numbers and quantities for a reader, shared by the terminal
report (`report.py`), `incast compare` and the HTML report: `format_number`,
`format_quantity` (a number with its unit: '15,219 us', '1.52 MB', '12.3 %') and
`format_value` (a summary value in the unit its key names), `format_ps` (a
simulated time), `format_factor` (an improvement factor over seeds), and the
checks `is_number` / `is_value` (a number; a number that is not NaN).
`wrap_text` breaks a line for the terminal without ever splitting a number from
its unit or a path.
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

#: Joins what `wrap_text` must not break apart (turned back into a space after).
NBSP = "\u00a0"
#: The space between a number and the unit after it ("15,219 us", "2.5 MB", "40 %").
_NUMBER_UNIT_SPACE = re.compile(r"(?<=\d) (?=(?:[munp]?s|[KMGT]?B|[KMGT]?b/s|%)(?![\w/]))")

#: Summary key suffixes and the unit they stand for (`paused_time_us` is in us).
UNIT_SUFFIXES = (
    ("_us", "us"),
    ("_ms", "ms"),
    ("_ps", "ps"),
    ("_bytes", "B"),
    ("_gbps", "Gb/s"),
    ("_share", "%"),
)


def is_number(value: Any) -> bool:
    """A real number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_value(value: Any) -> bool:
    """A number that is not NaN (a measured value: an empty statistic is NaN)."""
    return is_number(value) and not math.isnan(value)


#: Floats from this size on are written with an exponent (1e+20), not as a row
#: of digits a float does not hold.
HUGE = 1e15


def format_number(value: Any, digits: int = 2) -> str:
    """12345 -> '12,345'; 15219.05 -> '15,219'; 3.14159 -> '3.14'; 0.00123 -> '0.0012';
    '-' for missing or NaN."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value != 0 and abs(value) < 10**-digits:
            return f"{value:.{digits}g}"
        if abs(value) >= HUGE:
            return f"{value:.3g}"
        if abs(value) >= 1e4:
            return f"{value:,.0f}"
        return f"{value:,.{digits}f}"
    return str(value)


def format_ps(time_ps: float) -> str:
    """A simulated time in picoseconds, in the most readable unit."""
    time_ps = float(time_ps)
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if abs(time_ps) >= scale:
            return f"{time_ps / scale:.4g} {unit}"
    return f"{time_ps:.0f} ps"


def format_count(count: Any, noun: str) -> str:
    """A count and its noun: (1, 'flow') -> '1 flow'; (3, 'flow') -> '3 flows'."""
    return f"{format_number(count)} {noun if count == 1 else noun + 's'}"


def format_si(value: float) -> str:
    """A large count with an SI prefix: 1234567 -> '1.23M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def format_bytes(size: Any) -> str:
    """100000 -> '100 KB' (decimal units, as in scenario files)."""
    if not is_value(size):
        return format_number(size)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(size) >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.3g} B"


def format_share(share: Any) -> str:
    """A 0..1 share as '12.3 %'."""
    if is_value(share):
        return f"{share * 100:.1f} %"
    return "-"


def format_quantity(value: Any, unit: str | None, digits: int = 2) -> str:
    """A number with its unit: bytes scaled ('1.52 MB'), shares as percentages
    ('12.3 %'), anything else as `format_number` and the unit ('15,219 us')."""
    if unit == "B":
        return format_bytes(value)
    if unit == "%":
        return format_share(value)
    text = format_number(value, digits)
    if not unit or text == "-" or not is_number(value):
        return text
    return f"{text} {unit}"


def whole(value: Any) -> Any:
    """A float with no fractional part as an int (40.0 -> 40), for values that
    are settings or bounds rather than measurements; anything else unchanged."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def format_span(lo: Any, hi: Any, unit: str | None) -> str:
    """A [lo, hi] interval: '0 to 15,219 us'."""
    return f"{format_number(whole(lo))} to {format_quantity(whole(hi), unit)}"


def split_unit(key: str) -> tuple[str, str | None]:
    """'paused_time_us' -> ('paused_time', 'us'); a key without a unit suffix -> (key, None)."""
    for suffix, unit in UNIT_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)], unit
    return key, None


def format_value(key: str, value: Any) -> str:
    """A summary value, in the unit its key names: a pair of numbers is a span
    ('window_us': [0, 15219.05] -> '0 to 15,219 us'), a short list of names is
    listed, a longer list counted."""
    unit = split_unit(key)[1]
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(is_number(v) for v in value):
            return format_span(value[0], value[1], unit)
        if len(value) <= 8 and all(isinstance(v, (str, int, float)) for v in value):
            return ", ".join(format_quantity(v, unit) for v in value)
        return f"{len(value)} items"
    if isinstance(value, dict):
        return f"{len(value)} entries"
    return format_quantity(whole(value), unit)


def label_of(key: str) -> str:
    """A summary key for a reader: 'paused_time_us' -> 'paused time (us)'."""
    name, unit = split_unit(key)
    words = name.replace("_", " ")
    return f"{words} ({unit})" if unit and unit != "%" else words


def glue(text: Any) -> str:
    """The text with every space protected from `wrap_text` (a path or a name
    that must stay on one line)."""
    return str(text).replace(" ", NBSP)


def wrap_text(text: str, width: int, subsequent_indent: str = "") -> str:
    """`text` broken into lines of at most `width` at spaces, never between a
    number and its unit ("15,219 us"), inside a path or a word, or at a space
    `glue` protects (a word longer than the line gets a line of its own). Each
    line of `text` keeps its own indentation; later lines of a broken one start
    with `subsequent_indent`."""
    out: list[str] = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        glued = _NUMBER_UNIT_SPACE.sub(NBSP, line.lstrip(" "))
        wrapped = textwrap.wrap(
            glued,
            width=max(width, 1),
            initial_indent=indent,
            subsequent_indent=subsequent_indent or indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out += wrapped or [indent]
    return "\n".join(out).replace(NBSP, " ")


def format_factor(mean: float, std: float, seeds: int) -> str:
    """An improvement factor, mean ± std over seeds: '1.41x ± 0.05' ('1.41x'
    with one seed, '-' when unknown)."""
    if math.isnan(mean):
        return "-"
    if math.isinf(mean):
        return "inf"
    text = f"{mean:.2f}x"
    if seeds > 1 and not math.isnan(std):
        text += f" ± {std:.2f}"
    return text
