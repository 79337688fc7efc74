"""A squarified treemap of folders and files, for the page's map of where the
legacy code is.

    root = treemap.tree({"src/a.py": 3, "src/b/c.py": 5})
    for tile in treemap.layout(root, 960, 540):
        print(tile.node.path, tile.x, tile.y, tile.w, tile.h)

Note [Squarified treemaps]: the tiles of each folder are laid out as Bruls,
Huizing and van Wijk's "Squarified Treemaps" (Data Visualization 2000) does:
children largest first, added to the current row along the shorter side of
the space left while that does not make the row's worst aspect ratio worse,
then the row is fixed and the next starts. Within a folder the areas are
proportional to the sizes; a folder's label strip and padding take a little
of its own area.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

__all__ = ["Node", "Tile", "layout", "squarify", "tree"]

#: The height of a folder's label strip, and the padding inside a folder.
HEADER = 15.0
PAD = 2.0


@dataclass
class Node:
    """A folder (with children) or a file (a leaf) and its size."""

    name: str
    path: str
    size: float = 0.0
    children: list["Node"] = field(default_factory=list)
    index: int = -1  # a file's index (the caller's), -1 for a folder

    @property
    def leaf(self) -> bool:
        return not self.children


@dataclass
class Tile:
    node: Node
    x: float
    y: float
    w: float
    h: float
    depth: int
    header: bool = False  # a folder with its label strip drawn


def tree(sizes: dict[str, float], index: Optional[dict[str, int]] = None) -> Node:
    """The folder tree of ``sizes`` (a '/'-separated path -> size > 0); a
    chain of folders with one child folder each is one node (``src/pkg``)."""
    root = Node("", "")
    folders: dict[str, Node] = {"": root}
    for path, size in sizes.items():
        if size <= 0:
            continue
        parts = path.split("/")
        parent = root
        for i in range(len(parts) - 1):
            key = "/".join(parts[:i + 1])
            node = folders.get(key)
            if node is None:
                node = folders[key] = Node(parts[i], key)
                parent.children.append(node)
            parent = node
        parent.children.append(Node(parts[-1], path, size,
                                    index=index.get(path, -1) if index else -1))
    _sum(root)
    for child in root.children:
        _collapse(child)
    while len(root.children) == 1 and root.children[0].children:  # one top folder: start there
        root = root.children[0]
    return root


def _sum(node: Node) -> float:
    if node.children:
        node.size = sum(_sum(c) for c in node.children)
        node.children.sort(key=lambda c: (-c.size, c.name))
    return node.size


def _collapse(node: Node) -> None:
    while len(node.children) == 1 and node.children[0].children:
        only = node.children[0]
        node.name = f"{node.name}/{only.name}"
        node.path = only.path
        node.children = only.children
    for c in node.children:
        _collapse(c)


def _worst(row: list[float], side: float) -> float:
    s = sum(row)
    if s <= 0 or side <= 0:
        return float("inf")
    hi, lo = max(row), min(row)
    return max(side * side * hi / (s * s), (s * s) / (side * side * lo))


def squarify(areas: list[float], x: float, y: float, w: float,
             h: float) -> list[tuple[float, float, float, float]]:
    """Rectangles of ``areas`` (largest first, summing to about w*h) tiling
    the rectangle (x, y, w, h): Note [Squarified treemaps]."""
    out: list[tuple[float, float, float, float]] = []
    i, n = 0, len(areas)
    while i < n:
        side = min(w, h)
        if side <= 0:
            out.extend((x, y, 0.0, 0.0) for _ in range(n - i))
            break
        row = [areas[i]]
        j = i + 1
        while j < n and _worst(row + [areas[j]], side) <= _worst(row, side):
            row.append(areas[j])
            j += 1
        s = sum(row)
        if w >= h:  # a column on the left, as tall as the space
            cw = s / h if h else 0.0
            cy = y
            for a in row:
                ch = a / cw if cw else 0.0
                out.append((x, cy, cw, ch))
                cy += ch
            x, w = x + cw, max(0.0, w - cw)
        else:  # a row at the top, as wide as the space
            rh = s / w if w else 0.0
            cx = x
            for a in row:
                rw = a / rh if rh else 0.0
                out.append((cx, y, rw, rh))
                cx += rw
            y, h = y + rh, max(0.0, h - rh)
        i = j
    return out


def layout(root: Node, width: float, height: float) -> list[Tile]:
    """The tiles of every folder and file of ``root`` in a width x height
    area, folders before what they hold."""
    tiles: list[Tile] = []
    _place(root, 0.0, 0.0, width, height, 0, tiles)
    return tiles


def _place(node: Node, x: float, y: float, w: float, h: float, depth: int,
           tiles: list[Tile]) -> None:
    if not node.children:
        return
    total = node.size
    if total <= 0 or w <= 0 or h <= 0:
        return
    scale = w * h / total
    rects = squarify([c.size * scale for c in node.children], x, y, w, h)
    for c, (cx, cy, cw, ch) in zip(node.children, rects):
        if c.leaf:
            tiles.append(Tile(c, cx, cy, cw, ch, depth + 1))
            continue
        header = cw > 4 * HEADER and ch > 2.5 * HEADER
        tiles.append(Tile(c, cx, cy, cw, ch, depth + 1, header))
        top = HEADER if header else PAD
        _place(c, cx + PAD, cy + top, max(0.0, cw - 2 * PAD), max(0.0, ch - top - PAD),
               depth + 1, tiles)


def walk(node: Node) -> Iterator[Node]:
    yield node
    for c in node.children:
        yield from walk(c)
