"""Text pictures of layouts: a grid of blocks, each labelled with the devices holding it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class PictureLayout(Protocol):
    """What a picture reads of a layout: the array's shape and, per device id, the block it holds."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def blocks(self) -> Mapping[int, tuple[tuple[int, int], ...]]: ...


WIDTH = 48  # characters across a whole 2-D picture, before labels widen narrow blocks
MIN_HEIGHT = 4  # text lines down a whole 2-D picture


def device_label(devices) -> str:
    """``CPU 0,4``: the label ``jax.debug.visualize_array_sharding`` gives a block."""
    return "CPU " + ",".join(str(d) for d in sorted(devices))


def render_layout(layout: PictureLayout) -> str:
    """A box picture of a 1-D or 2-D layout; other ranks are listed block by block."""
    ndim = len(layout.shape)
    if ndim == 0:
        return f"a scalar, held by {device_label(layout.blocks)}"
    if ndim > 2:
        return _block_list(layout)
    row_cuts = _cuts(layout, 0) if ndim == 2 else [(0, 1)]
    col_cuts = _cuts(layout, ndim - 1)
    labels = [[_cell_label(layout, rows, cols, ndim) for cols in col_cuts] for rows in row_cuts]
    widths = [
        max(max(len(labels[r][c]) for r in range(len(row_cuts))) + 2, _share(cols, layout.shape[-1], WIDTH))
        for c, cols in enumerate(col_cuts)
    ]
    total_height = max(MIN_HEIGHT, len(row_cuts)) if ndim == 2 else 1
    heights = [max(1, _share(rows, layout.shape[0], total_height)) if ndim == 2 else 1 for rows in row_cuts]
    lines = [_border("┌", "┬", "┐", widths)]
    for r, height in enumerate(heights):
        if r:
            lines.append(_border("├", "┼", "┤", widths))
        for line in range(height):
            texts = [labels[r][c] if line == height // 2 else "" for c in range(len(widths))]
            lines.append("│" + "│".join(t.center(w) for t, w in zip(texts, widths)) + "│")
    lines.append(_border("└", "┴", "┘", widths))
    return "\n".join(lines)


def _cuts(layout: PictureLayout, dim: int) -> list[tuple[int, int]]:
    """The intervals between consecutive block boundaries along ``dim``."""
    boundaries = {0, layout.shape[dim]}
    for block in layout.blocks.values():
        boundaries.update(block[dim])
    points = sorted(boundaries)
    return list(zip(points[:-1], points[1:]))


def _cell_label(layout: PictureLayout, rows, cols, ndim: int) -> str:
    holders = []
    for device, block in layout.blocks.items():
        covers_cols = block[-1][0] <= cols[0] and cols[1] <= block[-1][1]
        covers_rows = ndim == 1 or (block[0][0] <= rows[0] and rows[1] <= block[0][1])
        if covers_cols and covers_rows:
            holders.append(device)
    return device_label(holders) if holders else "(no device)"


def _share(interval: tuple[int, int], size: int, total: int) -> int:
    return round(total * (interval[1] - interval[0]) / max(size, 1))


def _border(left: str, middle: str, right: str, widths: list[int]) -> str:
    return left + middle.join("─" * w for w in widths) + right


def _block_list(layout: PictureLayout) -> str:
    by_block: dict = {}
    for device, block in layout.blocks.items():
        by_block.setdefault(block, []).append(device)
    lines = [f"a {len(layout.shape)}-dimensional array; its blocks:"]
    for block, devices in sorted(by_block.items()):
        ranges = ", ".join(f"{start}:{stop}" for start, stop in block)
        lines.append(f"  [{ranges}] on {device_label(devices)}")
    return "\n".join(lines)
