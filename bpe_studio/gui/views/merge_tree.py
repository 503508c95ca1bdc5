"""A token's merge tree, drawn: :class:`MergeTreeView`.

What it does: draws a ``core.explain.merge_tree.MergeNode`` tree with the root on top and bytes and
special tokens as leaves; each node shows its readable token, id, rank and the pair count when
it was merged (a tooltip has its bytes and parts). Nodes whose merge comes at or after the
timeline's step (:meth:`~MergeTreeView.set_step`) are drawn greyed, as the tables grey the rows
of merges not made yet at that step. A tidy layout gives every subtree its own
band, so wide labels never overlap. Deep trees scroll (drag) and zoom (Ctrl+wheel,
:meth:`~MergeTreeView.fit_all`, :meth:`~MergeTreeView.actual_size`); a tree of more than
:data:`MAX_NODES` nodes is drawn breadth first until the budget runs out, and the nodes left
unexpanded are drawn folded (dashed). A click on a node emits ``node_clicked`` with its id.
What it leaves out: which token and tokenizer (``why_token``), where counts come from (the
caller's ``count_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFocusEvent,
    QFont,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from ...core.explain.merge_tree import MergeNode
from .common import monospace_font, points, token_text
from .theme import Colours, colours, themed

MAX_NODES = 1500  # nodes drawn for one tree; deeper ones are folded
MAX_LABEL = 22  # characters of a token shown in a node (the tooltip has all of it)
MESSAGE_WIDTH = 320  # the widest a message in place of a tree wraps to
H_GAP, V_GAP, PAD = 10.0, 14.0, 4.0
MIN_ZOOM, MAX_ZOOM, FIT_FLOOR = 0.15, 3.0, 0.65


def node_style(kind: str, c: Colours) -> tuple[str, str]:
    """A node's fill and border by its kind, in the scheme's colours."""
    return {
        "root": c.chip_chosen,
        "merge": c.chip,
        "byte": c.node_byte,
        "special": c.chip_special,
        "folded": c.chip,
    }[kind]


def short(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count_text(count: int | None) -> str:
    return f"{count:,}" if count is not None else "n/a"


# ------------------------------------------------------------------ tree drawing
class NodeItem(QGraphicsItem):
    """One token of the drawn tree: a rounded box with up to three lines."""

    def __init__(
        self, node: MergeNode, kind: str, lines: list[str], size: tuple[float, float]
    ) -> None:
        super().__init__()
        self.node = node
        self.kind = kind
        self.lines = lines
        self.count: int | None = None  # the pair count of its merge (None: n/a, or no merge)
        self.later = False  # its merge comes at or after the timeline's step: not made yet
        self.children: list[NodeItem] = []
        self.is_root = False
        self._w, self._h = size
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        self._hover = False

    @property
    def token_id(self) -> int:
        return self.node.id

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-self._w / 2 - 2, -2, self._w + 4, self._h + 4)

    def box(self) -> QRectF:
        return QRectF(-self._w / 2, 0, self._w, self._h)

    def hoverEnterEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._hover = False
        self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        c = colours()
        fill, border = node_style(self.kind, c)
        if self.later:
            # A ghost in the tables' "not made yet" grey (legible on the plot's background).
            fill, border = c.plot_background, c.later
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(border), 2.2 if self.is_root or self._hover else 1.2)
        if self.later:
            pen.setStyle(Qt.PenStyle.DotLine)
        elif self.kind == "folded":
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(QBrush(QColor(fill)))
        painter.drawRoundedRect(self.box(), 6, 6)
        token_font, meta_font = _fonts()
        y = PAD
        for i, line in enumerate(self.lines):
            font = token_font if i == 0 else meta_font
            metrics = QFontMetricsF(font)
            painter.setFont(font)
            if self.later:
                painter.setPen(QColor(c.later))
            else:
                painter.setPen(QColor(c.token_text if i == 0 else c.muted))
            rect = QRectF(-self._w / 2, y, self._w, metrics.height())
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, line)
            y += metrics.height() + (3 if i == 0 else 0)


_FONTS: tuple[QFont, QFont] | None = None


def _fonts() -> tuple[QFont, QFont]:
    global _FONTS
    if _FONTS is None:
        token = monospace_font(11)
        token.setBold(True)
        meta = QFont()
        meta.setPointSizeF(points(9))
        _FONTS = (token, meta)
    return _FONTS


def node_lines(node: MergeNode, kind: str, count: int | None) -> list[str]:
    token = short(token_text(node.token)) or "∅"
    if node.rank is None:
        if kind == "special":
            return [token, f"id {node.id:,} · special"]
        if len(node.token) == 1:
            return [token, f"id {node.id:,} · byte {node.token[0]:02X}"]
        return [token, f"id {node.id:,} · no merge"]
    lines = [token, f"id {node.id:,} · rank {node.rank:,}", f"count {count_text(count)}"]
    if kind == "folded":
        lines[2] += "  ▸ open"
    return lines


def node_tooltip(node: MergeNode, count: int | None, later: bool = False) -> str:
    """Its bytes and, for a merged token, its merge; ``later``: that merge comes at or after
    the timeline's step (the token is not made yet there)."""
    hexes = " ".join(f"{b:02x}" for b in node.token[:32]) + (" …" if len(node.token) > 32 else "")
    head = f"{token_text(node.token)}\nid {node.id:,} · {len(node.token):,} bytes: {hexes}"
    if node.rank is None:
        return head
    assert node.left is not None and node.right is not None
    text = (
        f"{head}\nmerge rank {node.rank:,}: {token_text(node.left.token)} + "
        f"{token_text(node.right.token)}, pair count {count_text(count)} when merged"
    )
    if later:
        text += "\nnot learned yet at the timeline's step"
    return text


def is_later(node: MergeNode, step: int | None) -> bool:
    """Whether ``node``'s merge is not made yet at timeline step ``step`` (merges 0..step-1
    applied); bytes and special tokens always exist, and None is no timeline."""
    return step is not None and node.rank is not None and node.rank >= step


# Keys that follow the node the keyboard is on, as a click does.
_FOLLOW_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
# Keys that move it: the next node (root first, breadth first) or the one before.
_STEPS = {Qt.Key.Key_Down: 1, Qt.Key.Key_Right: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_Left: -1}


class MergeTreeView(QGraphicsView):
    """The drawn merge tree. ``node_clicked`` carries the id of the node clicked."""

    node_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mergeTree")  # its focus frame (theme.colour_rules)
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        themed(self, _restyle)
        self.root: NodeItem | None = None
        self.step: int | None = None  # the timeline's step (set_step); None: no timeline
        self.folded = 0  # nodes not drawn (their parents are folded)
        self._auto_fit = True  # until the user zooms
        # The node the keyboard is on (arrows move it, Enter follows it, as a click does),
        # and the outline that shows it; None until a key is pressed on a new tree.
        self.current: NodeItem | None = None
        self._outline: QGraphicsRectItem | None = None
        self._message: QGraphicsTextItem | None = None  # what it shows in place of a tree

    # ---------------------------------------------------------- drawing
    def show_message(self, text: str) -> None:
        scene = self.scene()
        scene.clear()
        self.root = None
        self.current, self._outline = None, None
        item = self._message = scene.addText(text)
        item.setDefaultTextColor(QColor(colours().plot_muted))
        self.resetTransform()
        self._wrap_message()

    def _wrap_message(self) -> None:
        """The message wrapped to the view's width (a fixed width was cut on the left, with
        a scroll bar, in a narrow inspector)."""
        item = self._message
        if item is None:
            return
        margin = 2 * item.document().documentMargin()
        item.setTextWidth(max(min(MESSAGE_WIDTH, self.viewport().width() - margin), 40.0))
        self.scene().setSceneRect(item.boundingRect())
        self.centerOn(item)

    def set_tree(
        self,
        root: MergeNode,
        count_of: Callable[[MergeNode], int | None],
        special_ids: Collection[int] = (),
        step: int | None = None,
    ) -> None:
        """Draw ``root``'s tree; ``count_of`` gives a merged node's pair count (None: n/a),
        ``step`` the timeline's (see :meth:`set_step`)."""
        scene = self.scene()
        scene.clear()
        self.current, self._outline, self._message = None, None, None
        nodes, parent, folded = _unfold(root, MAX_NODES)
        self.folded = folded
        expanded = set(parent[1:])
        items: list[NodeItem] = []
        token_font, meta_font = _fonts()
        tm, mm = QFontMetricsF(token_font), QFontMetricsF(meta_font)
        height = PAD * 2 + tm.height() + 3 + 2 * mm.height()
        for i, node in enumerate(nodes):
            if node.rank is not None and i not in expanded:
                kind = "folded"  # the root too: a tree of one node would not fold
            elif i == 0 and node.rank is not None:
                kind = "root"
            elif node.rank is not None:
                kind = "merge"
            else:
                kind = "special" if node.id in special_ids else "byte"
            count = count_of(node) if node.rank is not None else None
            lines = node_lines(node, kind, count)
            width = max(
                [tm.horizontalAdvance(lines[0])] + [mm.horizontalAdvance(s) for s in lines[1:]]
            )
            item = NodeItem(node, kind, lines, (max(width + 2 * PAD, 54.0), height))
            item.count = count
            items.append(item)
            if i:
                items[parent[i]].children.append(item)
        _place(items, height)
        for item in items:
            for child in item.children:
                scene.addItem(_edge(item, child, height))
        for item in items:
            scene.addItem(item)
        self.root = items[0]
        self.root.is_root = True
        self.step = None
        for item in items:
            item.setToolTip(node_tooltip(item.node, item.count))
        self.set_step(step)
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-8, -8, 8, 8))
        self._auto_fit = True
        self.fit()

    def set_step(self, step: int | None) -> None:
        """Grey the nodes whose merge is not made yet at timeline step ``step`` (None: no
        timeline). Cheap, for every frame of a drag: only nodes that change are touched."""
        if step == self.step:
            return
        self.step = step
        for item in self.node_items():
            later = is_later(item.node, step)
            if later != item.later:
                item.later = later
                item.setToolTip(node_tooltip(item.node, item.count, later))
                item.update()

    # ------------------------------------------------------------- zoom
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        self.setTransform(self.transform().fromScale(factor, factor))

    @Slot()
    def fit(self) -> None:
        """The whole tree when it fits at a readable size (at most 1:1); else the readable
        size, scrolled to the root. Also after every resize, until the user zooms."""
        self._auto_fit = True
        self._fit(FIT_FLOOR)

    @Slot()
    def fit_all(self) -> None:
        """The whole tree however small (down to the smallest zoom)."""
        self._auto_fit = False
        self._fit(MIN_ZOOM)

    def _fit(self, floor: float) -> None:
        rect = self.sceneRect()
        if rect.isEmpty() or self.root is None:
            return
        view = self.viewport().rect()
        scale = min(view.width() / rect.width(), view.height() / rect.height(), 1.0)
        self.set_zoom(max(scale, floor))
        if scale >= floor:
            self.centerOn(rect.center())
        else:
            # Too big to read whole: readable size, the root at the top.
            root = self.root.pos()
            self.centerOn(root.x(), root.y() - 12 + view.height() / 2 / self.zoom())

    @Slot()
    def actual_size(self) -> None:
        self._auto_fit = False
        self.set_zoom(1.0)
        if self.root is not None:
            self.centerOn(self.root)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._auto_fit = False
            self.set_zoom(self.zoom() * (1.15 ** (event.angleDelta().y() / 120)))
            event.accept()
        else:
            super().wheelEvent(event)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._wrap_message()
        if self._auto_fit:
            self.fit()

    # ------------------------------------------------------------ clicks
    def node_at(self, pos: Any) -> NodeItem | None:
        item = self.itemAt(pos)
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        # The keyboard's way to a node (the accessibility audit: only a click reached one):
        # arrows step through the nodes root first, breadth first; Enter or Space follows
        # the node, as a click on it does.
        nodes = self.node_items()
        key = Qt.Key(event.key())
        step = _STEPS.get(key)
        if not nodes or (step is None and key not in _FOLLOW_KEYS):
            super().keyPressEvent(event)
            return
        event.accept()
        if step is None:
            if self.current is not None:
                self.node_clicked.emit(self.current.token_id)
            return
        at = nodes.index(self.current) if self.current in nodes else -step
        self._move_to(nodes[(at + step) % len(nodes)])

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt override
        super().focusInEvent(event)
        # The keyboard starts on the root, outlined: with no node current the view took the
        # focus and showed it nowhere until an arrow was pressed. Not for a click: moved to
        # the root before the press arrived, the view lost the node clicked (the review).
        by_mouse = event.reason() == Qt.FocusReason.MouseFocusReason
        if self.current is None and self.root is not None and not by_mouse:
            self._move_to(self.root)

    def _move_to(self, node: NodeItem) -> None:
        self.current = node
        if self._outline is None:
            self._outline = QGraphicsRectItem()
            self._outline.setZValue(10)
            self.scene().addItem(self._outline)
        pen = QPen(QColor(colours().accent), 2, Qt.PenStyle.DashLine)
        self._outline.setPen(pen)
        self._outline.setRect(node.sceneBoundingRect().adjusted(-3, -3, 3, 3))
        self.ensureVisible(node)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        node = self.node_at(event.position().toPoint())
        if node is not None and event.button() == Qt.MouseButton.LeftButton:
            event.accept()
            self.node_clicked.emit(node.token_id)
            return
        super().mousePressEvent(event)

    # ------------------------------------------------------------- tests
    def node_items(self) -> list[NodeItem]:
        """The drawn nodes, root first, breadth first."""
        out = [self.root] if self.root is not None else []
        i = 0
        while i < len(out):
            out += out[i].children
            i += 1
        return out

    def shown_structure(self) -> tuple | None:
        """The drawn tree as nested ``(id, rank, count line, (children...))``."""
        if self.root is None:
            return None
        done: dict[int, tuple] = {}
        order = self.node_items()
        for item in reversed(order):
            kids = tuple(done[id(c)] for c in item.children)
            count = item.lines[2] if len(item.lines) > 2 else None
            done[id(item)] = (item.token_id, item.node.rank, count, kids)
        return done[id(order[0])]


def _unfold(root: MergeNode, budget: int) -> tuple[list[MergeNode], list[int], int]:
    """The tree's nodes breadth first (a subtree met twice is drawn twice), each one's
    parent index, and how many were left out: once ``budget`` would be passed, the nodes
    not yet expanded keep their children folded."""
    nodes, parent = [root], [-1]
    left_out = 0
    i = 0
    while i < len(nodes):
        node = nodes[i]
        if node.left is not None and node.right is not None:
            if len(nodes) + 2 <= budget:
                nodes += [node.left, node.right]
                parent += [i, i]
            else:
                left_out += 1
        i += 1
    return nodes, parent, left_out


def _place(items: list[NodeItem], height: float) -> None:
    """Tidy layout: each subtree gets a band as wide as the wider of its node and its
    children's bands side by side, so no two nodes overlap; a parent sits centred over its
    band, one row above its children. ``items`` is breadth first (parents before children)."""
    band: dict[int, float] = {}
    for item in reversed(items):
        kids = sum(band[id(c)] for c in item.children) + H_GAP * max(len(item.children) - 1, 0)
        band[id(item)] = max(item.box().width(), kids)
    left = {id(items[0]): 0.0}
    depth = {id(items[0]): 0}
    for item in items:
        x0, w = left[id(item)], band[id(item)]
        item.setPos(x0 + w / 2, depth[id(item)] * (height + V_GAP))
        kids = sum(band[id(c)] for c in item.children) + H_GAP * max(len(item.children) - 1, 0)
        x = x0 + (w - kids) / 2
        for child in item.children:
            left[id(child)] = x
            depth[id(child)] = depth[id(item)] + 1
            x += band[id(child)] + H_GAP


def _restyle(view: QGraphicsView) -> None:
    """The scheme's colours on the view's background, edges and message (nodes read them as
    they paint)."""
    c = colours()
    view.setBackgroundBrush(QColor(c.plot_background))
    for item in view.scene().items():
        if isinstance(item, QGraphicsPathItem):
            item.setPen(QPen(QColor(c.edge), 1.4))
        elif isinstance(item, QGraphicsTextItem):
            item.setDefaultTextColor(QColor(c.plot_muted))


def _edge(parent: NodeItem, child: NodeItem, height: float) -> QGraphicsPathItem:
    """A curve from the bottom centre of ``parent`` to the top centre of ``child``."""
    sx, sy = parent.pos().x(), parent.pos().y() + height
    ex, ey = child.pos().x(), child.pos().y()
    path = QPainterPath()
    path.moveTo(sx, sy)
    mid = (sy + ey) / 2
    path.cubicTo(sx, mid, ex, mid, ex, ey)
    item = QGraphicsPathItem(path)
    item.setPen(QPen(QColor(colours().edge), 1.4))
    item.setZValue(-1)
    return item
